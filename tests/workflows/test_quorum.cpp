// `quorum:` on a sweep inside a repeat group: what the reader builds (RepeatGroup::quorum, the
// quorum file's env) and its located errors, with the policies' own checks from the registry.
#include <doctest/doctest.h>

#include "schedulers/policy_registry.hpp"
#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;

namespace {

WorkflowLoadOptions checked_options() {
  static const PolicyRegistry registry = PolicyRegistry::with_builtins();
  WorkflowLoadOptions o = chorus::test::test_options();
  o.check_quorum = [](const std::string& policy, const OptionOrigin& at,
                      const PolicyOptions& options) {
    return registry.check_quorum(policy, at, options);
  };
  return o;
}

// A group "ens" whose sweep "sim" has 6 members and the given quorum line.
std::string ensemble(const std::string& quorum) {
  return "name: q\n"
         "tasks:\n"
         "  - repeat: ens\n"
         "    max_rounds: 3\n"
         "    until: {file: \"quorum/ens/round-{round}.json\", key: /used, above: 100}\n"
         "    tasks:\n"
         "      - name: sim\n"
         "        foreach: {i: \"range(0, 6)\"}\n"
         "        command: [./sim, \"{i}\"]\n"
         "        " +
         quorum +
         "\n"
         "      - name: merge\n"
         "        after: [sim]\n"
         "        command: [./merge]\n";
}

}  // namespace

TEST_CASE("Workflows.Quorum.SweepInARoundGetsItsQuorum") {
  auto g = parse(ensemble("quorum: {policy: static, n: 6, k: 4}"), checked_options());
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  REQUIRE(g->repeats.size() == 1);
  REQUIRE(g->repeats[0].quorum.has_value());
  const QuorumSweep& q = *g->repeats[0].quorum;
  CHECK(q.name == "sim");
  CHECK(q.choice.policy == "static");
  CHECK(q.choice.n == 6);
  REQUIRE(q.choice.options.find("k") != nullptr);
  CHECK(q.choice.options.find("k")->value.text == "4");
  CHECK(q.choice.policy_at.line == 10);
  CHECK(q.members == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(q.file == "/home/u/run/quorum/ens/round-{round}.json");
  // The group's other tasks are told where the round's record is; the members are not.
  const TaskSpec* merge = find_task(*g, "merge[round=1]");
  REQUIRE(merge != nullptr);
  bool told = false;
  for (const auto& [k, v] : merge->env) {
    if (k == "CHORUS_QUORUM_FILE") told = v == "/home/u/run/quorum/ens/round-1.json";
  }
  CHECK(told);
  const TaskSpec* sim = find_task(*g, "sim[round=1,i=0]");
  REQUIRE(sim != nullptr);
  for (const auto& [k, v] : sim->env) CHECK(k != "CHORUS_QUORUM_FILE");
  // Later rounds carry the file of their own round.
  auto plan = g->repeats[0].expand(2);
  REQUIRE(plan.ok());
  bool told2 = false;
  for (const auto& t : plan->tasks) {
    for (const auto& [k, v] : t.env) {
      if (k == "CHORUS_QUORUM_FILE") told2 = v == "/home/u/run/quorum/ens/round-2.json";
    }
  }
  CHECK(told2);
}

TEST_CASE("Workflows.Quorum.PolicyDefaultsToStaticAndNToTheMemberCount") {
  auto g = parse(ensemble("quorum: {k: 5}"), checked_options());
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->repeats[0].quorum->choice.policy == "static");
  CHECK(g->repeats[0].quorum->choice.n == 6);
  auto all = parse(ensemble("quorum: {policy: wait-all}"), checked_options());
  REQUIRE_MESSAGE(all.ok(), all.status().message());
  CHECK(all->repeats[0].quorum->choice.policy == "wait-all");
}

TEST_CASE("Workflows.Quorum.BadInputIsLocated") {
  const WorkflowLoadOptions o = checked_options();
  CHECK(error_of(ensemble("quorum: {n: 6, k: 7}"), o) ==
        "wf.yaml:10:27: k 7 of the quorum of task 'sim' is more than its n = 6 members: a round "
        "cannot wait for more results than it asked for");
  CHECK(error_of(ensemble("quorum: {k: 0}"), o) ==
        "wf.yaml:10:21: k 0 of the quorum of task 'sim' must be at least 1 (a round uses at "
        "least one result)");
  CHECK(error_of(ensemble("quorum: {b: 6}"), o) ==
        "wf.yaml:10:21: b 6 of the quorum of task 'sim' leaves no result to wait for: backup "
        "workers must be fewer than n = 6");
  CHECK(error_of(ensemble("quorum: {n: 16, k: 12}"), o) ==
        "wf.yaml:10:21: 'n' of the quorum of task 'sim' is 16 but its foreach has 6 members "
        "(line 8): n must be the sweep's member count");
  // The known names grow with the registry: only the start is pinned.
  const std::string unknown = error_of(ensemble("quorum: {policy: statc, k: 4}"), o);
  CHECK_MESSAGE(unknown.rfind("wf.yaml:10:26: unknown quorum policy 'statc' (did you mean "
                              "'static'?); known: ",
                              0) == 0,
                unknown);
  CHECK(error_of(ensemble("quorum: {policy: static, kk: 4}"), o) ==
        "wf.yaml:10:34: quorum policy 'static' takes no option 'kk' (did you mean 'k'?); its "
        "options: b, k");
  CHECK(error_of(ensemble("quorum: [4]"), o) ==
        "wf.yaml:10:17: 'quorum' of task 'sim' must be a map such as {policy: static, n: 16, k: "
        "12}, got a list");
}

TEST_CASE("Workflows.Quorum.OutsideARoundOrNotASweep") {
  const WorkflowLoadOptions o = checked_options();
  CHECK(error_of("tasks:\n"
                 "  - name: sim\n"
                 "    foreach: {i: [a, b, c]}\n"
                 "    command: [./sim]\n"
                 "    quorum: {k: 2}\n",
                 o) ==
        "wf.yaml:5:5: 'quorum' on task 'sim' outside a round: a quorum closes a sweep inside a "
        "'repeat:' group early (move the task into a repeat group's 'tasks:')");
  CHECK(error_of("tasks:\n"
                 "  - repeat: g\n"
                 "    max_rounds: 2\n"
                 "    until: {file: x.json, key: /done, equals: true}\n"
                 "    tasks:\n"
                 "      - name: one\n"
                 "        command: [./one]\n"
                 "        quorum: {k: 1}\n",
                 o) ==
        "wf.yaml:8:9: task 'one' has 'quorum' but is not a sweep: a quorum closes a round's "
        "foreach of n members (add 'foreach:' to the task)");
  CHECK(error_of("tasks:\n"
                 "  - repeat: g\n"
                 "    max_rounds: 2\n"
                 "    until: {file: x.json, key: /done, equals: true}\n"
                 "    tasks:\n"
                 "      - name: a\n"
                 "        foreach: {i: [1, 2]}\n"
                 "        command: [./a]\n"
                 "        quorum: {k: 1}\n"
                 "      - name: b\n"
                 "        foreach: {i: [1, 2]}\n"
                 "        command: [./b]\n"
                 "        quorum: {k: 1}\n",
                 o) ==
        "wf.yaml:13:9: repeat group 'g' has a second quorum sweep, 'b' (the first is 'a', line "
        "9): a group's rounds close on one quorum");
}
