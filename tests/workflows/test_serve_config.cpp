// The serve config (workflows/serve_config.hpp) and what it means for one user
// (api/serve_access.hpp). Group cases use root's group, which every Debian system has.
#include <doctest/doctest.h>

#include <string>

#include "api/serve_access.hpp"
#include "workflows/serve_config.hpp"

using namespace chorus;

namespace {

ServeConfig parsed(const std::string& text) {
  auto c = parse_serve_config(text, "serve.yaml");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  return *c;
}

std::string error_of(const std::string& text) {
  auto c = parse_serve_config(text, "serve.yaml");
  REQUIRE(!c.ok());
  CHECK(c.status().code() == ErrorCode::invalid_argument);
  return c.status().message();
}

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Workflows.ServeConfig.ReadsEverySection") {
  ServeConfig c = parsed(
      "queue: uwfq\n"
      "placement: first-fit\n"
      "cores: 16\n"
      "admins: {users: [alice], groups: [hpcadmin]}\n"
      "weights: {users: {alice: 2.5}, groups: {physics: 3}}\n"
      "limits:\n"
      "  default: {queued_tasks: 10000, running_cores: 64}\n"
      "  users: {bob: {queued_tasks: 100}}\n"
      "  groups: {students: {running_cores: 8}}\n");
  CHECK(c.queue == "uwfq");
  CHECK(c.queue_at.line == 1);
  CHECK(c.placement == "first-fit");
  CHECK(c.cores == 16);
  CHECK(c.admin_users == std::vector<std::string>{"alice"});
  CHECK(c.admin_groups == std::vector<std::string>{"hpcadmin"});
  CHECK(c.user_weights.at("alice") == doctest::Approx(2.5));
  CHECK(c.group_weights.at("physics") == doctest::Approx(3));
  CHECK(c.default_limits.queued_tasks == 10000);
  CHECK(c.default_limits.running_cores == 64);
  CHECK(c.default_limits.running_cores_at.line == 7);
  CHECK(c.user_limits.at("bob").queued_tasks == 100);
  CHECK(!c.user_limits.at("bob").running_cores);
  CHECK(c.group_limits.at("students").running_cores == 8);
}

TEST_CASE("Workflows.ServeConfig.PolicyOptionsAreKeptWithTheirPlaces") {
  ServeConfig c = parsed(
      "queue: uwfq\n"
      "policy_options: {lane_cores: auto, grace: 2s, model: /m.json}\n");
  REQUIRE(c.policy_options.entries.size() == 3);
  const OptionEntry* lane = c.policy_options.find("lane_cores");
  REQUIRE(lane != nullptr);
  CHECK(lane->value.text == "auto");
  CHECK(lane->key_at.format() == "serve.yaml:2:18");
  CHECK(c.policy_options.find("grace")->value.text == "2s");
  // Whose option each is, and whether its value is right, the policies say (tests/integration,
  // Integration.Serve.ConfigErrorsAreLocated); here only the shape and the one key that has its
  // own place in the config.
  CHECK(has(error_of("policy_options: [lane_cores]\n"),
            "serve.yaml:1:17: 'policy_options' must be a map"));
  CHECK(has(error_of("policy_options: {weights: {alice: 2}}\n"),
            "serve.yaml:1:18: 'weights' in 'policy_options': users' and groups' shares are the "
            "top-level"));
}

TEST_CASE("Workflows.ServeConfig.EmptyFileIsTheDefaults") {
  ServeConfig c = parsed("# nothing yet\n");
  CHECK(c.queue.empty());
  CHECK(c.cores == 0);
  CHECK(c.user_weights.empty());
  CHECK(!c.default_limits.queued_tasks);
}

TEST_CASE("Workflows.ServeConfig.EveryMistakeIsLocated") {
  CHECK(has(error_of("limts: {}\n"),
            "serve.yaml:1:1: unknown key 'limts' in the serve config (did you mean 'limits'?)"));
  CHECK(has(error_of("weights: {users: {alice: 0}}\n"),
            "serve.yaml:1:26: the weight of 'alice' must be a positive number"));
  CHECK(has(error_of("weights: {users: {alice: \"2\"}}\n"), "serve.yaml:1:26:"));
  CHECK(has(error_of("cores: 0\n"), "serve.yaml:1:8:"));
  CHECK(has(error_of("limits: {default: {queued_tasks: -3}}\n"), "serve.yaml:1:"));
  CHECK(
      has(error_of("limits: {users: {bob: {runing_cores: 3}}}\n"), "did you mean 'running_cores'"));
  CHECK(has(error_of("admins: {users: [\"\"]}\n"), "must not be empty"));
  CHECK(has(error_of("admins: [alice]\n"), "'admins' must be a map"));
  CHECK(has(error_of("- a\n- b\n"), "serve.yaml:1:1: a serve config is a map"));
  CHECK(has(error_of("queue: [x\n"), "YAML syntax error"));
  // Two mistakes: both reported, each on its own line.
  const std::string two = error_of("cores: x\nweights: {users: {a: -1}}\n");
  CHECK(has(two, "serve.yaml:1:"));
  CHECK(has(two, "serve.yaml:2:"));
}

TEST_CASE("Workflows.ServeConfig.MissingFileSaysWhich") {
  auto c = load_serve_config("/nonexistent/serve.yaml");
  REQUIRE(!c.ok());
  CHECK(has(c.status().message(), "/nonexistent/serve.yaml"));
}

TEST_CASE("Workflows.ServeAccess.LimitsResolveUserThenGroupsThenDefault") {
  ServeAccess access(
      parsed("limits:\n"
             "  default: {queued_tasks: 100, running_cores: 4}\n"
             "  users: {root: {queued_tasks: 7}}\n"
             "  groups: {root: {running_cores: 12, queued_tasks: 50}}\n"));
  ServeLimits root = access.limits_of("root", 0);
  CHECK(root.queued_tasks == 7);    // its own entry wins over its group's
  CHECK(root.running_cores == 12);  // then its group's
  CHECK(root.running_cores_at.line == 4);
  ServeLimits nobody = access.limits_of("nobody-at-all", 65534);
  CHECK(nobody.queued_tasks == 100);
  CHECK(nobody.running_cores == 4);
  CHECK(!ServeAccess().limits_of("root", 0).queued_tasks);  // no config: no limit
}

TEST_CASE("Workflows.ServeAccess.AdminsByUidNameAndGroup") {
  ServeAccess access(parsed("admins: {users: [carol], groups: [root]}\n"));
  CHECK(access.is_admin(0, "root", 0));
  CHECK(access.is_admin(1234, "carol", 1234));
  CHECK(!access.is_admin(1235, "dave-not-a-user", 65534));
  ServeAccess none;
  CHECK(none.is_admin(0, "root", 0));  // root administers every instance
  CHECK(!none.is_admin(1234, "carol", 1234));
}

TEST_CASE("Workflows.ServeAccess.WeightsOfGroupsReachTheirUsersAndAUsersOwnWins") {
  ServeAccess by_group(parsed("weights: {groups: {root: 3}}\n"));
  CHECK(by_group.user_weights().at("root") == doctest::Approx(3));  // its primary group
  ServeAccess own(parsed("weights: {users: {root: 0.5}, groups: {root: 3}}\n"));
  CHECK(own.user_weights().at("root") == doctest::Approx(0.5));
  ServeAccess unknown(parsed("weights: {groups: {no-such-group-here: 3}}\n"));
  CHECK(unknown.user_weights().empty());
}
