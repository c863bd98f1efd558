// Policies own their options: a policy declares its keys, the registry checks values and keys
// (located where they were written: a workflow's `scheduler:` section, or a flag) and the policy
// builds from them. Shown with test policies that have options of their own.
#include <doctest/doctest.h>

#include <string>

#include "schedulers/policy_registry.hpp"
#include "support/vip_first_queue.hpp"
#include "workflows/workflow_loader.hpp"

using namespace chorus;
using chorus::test::ModelPlacement;
using chorus::test::VipFirstQueue;

namespace {

PolicyRegistry test_registry() {
  auto r = PolicyRegistry::with_builtins();
  r.add_queue("vip-first", VipFirstQueue::option_specs(), VipFirstQueue::from_args);
  r.add_placement("with-model", ModelPlacement::option_specs(), ModelPlacement::from_args);
  return r;
}

const char* const kTasks = R"Y(
tasks:
  - name: a
    user: alice
    command: [x]
  - name: b
    user: bob
    command: [x]
)Y";

// The workflow read as the CLI reads it: the section checked by the registry's policies.
Result<WorkflowGraph> load(const PolicyRegistry& registry, const std::string& scheduler_line) {
  WorkflowLoadOptions options;
  options.base_dir = "/tmp";
  options.check_scheduler = [&](const SchedulerChoice& c) { return registry.check(c); };
  return parse_workflow_text(scheduler_line + kTasks, "wf.yaml", options);
}

std::string error_of(const PolicyRegistry& registry, const std::string& scheduler_line) {
  auto g = load(registry, scheduler_line);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == ErrorCode::invalid_argument);
  return g.status().message();
}

// The queue's order for the graph's tasks, all ready at once.
std::vector<std::string> order(QueuePolicy& q, const WorkflowGraph& g) {
  NodeInfo node{"n0", Resources{1, 0, 0}};
  NodeView view{&node, node.capacity, 0};
  ClusterView cluster{std::span<const NodeView>(&view, 1), TimePoint{}};
  for (const auto& t : g.tasks) q.on_ready(t, TimePoint{});
  std::vector<std::string> out;
  while (auto id = q.next(cluster)) {
    q.on_start(g.tasks[*id], TimePoint{});
    out.push_back(g.tasks[*id].name);
  }
  return out;
}

}  // namespace

TEST_CASE("Schedulers.Options.ATestPolicyReadsItsOwnOptionFromTheSection") {
  const auto registry = test_registry();
  auto g = load(registry, "scheduler: {queue: vip-first, vip: bob}");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  auto policies = registry.make_policies(g->scheduler);
  REQUIRE_MESSAGE(policies.ok(), policies.status().message());
  CHECK(order(*policies->queue, *g) == std::vector<std::string>{"b", "a"});

  // Its default lives with it.
  auto plain = load(registry, "scheduler: {queue: vip-first}");
  REQUIRE(plain.ok());
  auto q = registry.make_policies(plain->scheduler);
  REQUIRE(q.ok());
  CHECK(dynamic_cast<VipFirstQueue&>(*q->queue).vip() == VipFirstQueue::kDefaultVip);
}

TEST_CASE("Schedulers.Options.AnUnknownKeyIsLocatedWithTheKeysThePoliciesTake") {
  const auto registry = test_registry();
  CHECK(error_of(registry, "scheduler: {queue: vip-first, vpi: bob}") ==
        "wf.yaml:1:31: unknown key 'vpi' in 'scheduler' (did you mean 'vip'?); options of queue "
        "policy 'vip-first': vip, of placement policy 'first-fit': none");
  // Another policy's option: who takes it.
  CHECK(error_of(registry, "scheduler: {queue: fifo, vip: bob}") ==
        "wf.yaml:1:26: queue policy 'fifo' takes no option 'vip' (vip-first does); its options: "
        "none");
  CHECK(error_of(registry, "scheduler: {queue: vip-frist}") ==
        "wf.yaml:1:20: unknown queue policy 'vip-frist' (did you mean 'vip-first'?); known: cfq, "
        "fair, fifo, ujf, uwfq, vip-first");
}

TEST_CASE("Schedulers.Options.ABadValueIsLocatedAtTheValue") {
  const auto registry = test_registry();
  // Refused by its kind (the registry) and by the policy itself (PolicyArgs::fail).
  CHECK(error_of(registry, "scheduler: {queue: vip-first, vip: [a, b]}") ==
        "wf.yaml:1:36: 'vip' in 'scheduler' must be a single value (a name or a path), got a "
        "list");
  CHECK(error_of(registry, "scheduler: {queue: vip-first, vip: \"\"}") ==
        "wf.yaml:1:36: 'vip' of queue policy 'vip-first' must name a user");
  // Built-in policies' values too.
  CHECK(error_of(registry, "scheduler: {queue: uwfq, grace: soon}") ==
        "wf.yaml:1:33: 'grace' in 'scheduler' must be a duration such as 1s or 500ms, got "
        "'soon'");
}

TEST_CASE("Schedulers.Options.TheSectionSplitsItsKeysBetweenQueueAndPlacement") {
  const auto registry = test_registry();
  auto g = load(registry,
                "scheduler: {queue: vip-first, placement: with-model, vip: bob, model: net.json}");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  auto policies = registry.make_policies(g->scheduler);
  REQUIRE_MESSAGE(policies.ok(), policies.status().message());
  CHECK(dynamic_cast<VipFirstQueue&>(*policies->queue).vip() == "bob");
  CHECK(dynamic_cast<ModelPlacement&>(*policies->placement).model() == "net.json");
}

TEST_CASE("Schedulers.Options.AFlagIsLocatedAtTheFlag") {
  const auto registry = PolicyRegistry::with_builtins();
  PolicyOptions options;
  options.set({"grace", {"--grace"}, {OptionValue::Kind::scalar, "soon", {}, {"--grace"}}, {}});
  auto q = registry.make_queue("uwfq", options);
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().message() ==
        "--grace: 'grace' must be a duration such as 1s or 500ms, got "
        "'soon'");
  auto fifo = registry.make_queue("fifo", options);
  REQUIRE_FALSE(fifo.ok());
  // The value is checked all the same, by the kind the policies that take it give it.
  CHECK(fifo.status().message() ==
        "--grace: queue policy 'fifo' takes no option 'grace' (cfq and uwfq do); its options: "
        "none\n--grace: 'grace' must be a duration such as 1s or 500ms, got 'soon'");
}

TEST_CASE("Schedulers.Options.OnlyPoliciesThatTakeAnOptionGetItFromASharedSet") {
  // chorus simulate --compare fifo,fair,... --weights: each policy takes what it declares.
  const auto registry = PolicyRegistry::with_builtins();
  PolicyOptions options;
  OptionEntry weights{"weights", {"--weights"}, {}, {}};
  weights.value.kind = OptionValue::Kind::map;
  weights.value.items.push_back(
      {"alice", {"--weights"}, {OptionValue::Kind::scalar, "2", {}, {}}, {}});
  options.set(weights);
  options.set({"grace", {"--grace"}, {OptionValue::Kind::scalar, "2s", {}, {}}, {}});
  CHECK(registry.options_taken("fifo", "first-fit", options).empty());
  CHECK(registry.options_taken("fair", "first-fit", options).entries.size() == 1);
  CHECK(registry.options_taken("uwfq", "first-fit", options).entries.size() == 2);
  CHECK(registry.queues_taking("weights") ==
        std::vector<std::string>{"cfq", "fair", "ujf", "uwfq"});
}

TEST_CASE("Schedulers.Options.OnlyAPolicyThatAsksForHistoryMakesAnyoneReadIt") {
  const auto registry = PolicyRegistry::with_builtins();
  for (const auto& name : registry.queue_names()) {
    CAPTURE(name);
    int asked = 0;
    PolicyContext context;
    context.history = [&asked] {
      ++asked;
      return RuntimeSamples{{"long", 10}};
    };
    REQUIRE(registry.make_queue(name, {}, context).ok());
    // The estimators of fair queuing use past runtimes; the others estimate no work.
    CHECK(asked == (name == "cfq" || name == "uwfq" ? 1 : 0));
  }
}
