#include <doctest/doctest.h>

#include "core/text.hpp"
#include "core/workflow_graph.hpp"

using namespace chorus;

namespace {
TaskSpec named(std::string name, std::vector<TaskId> after = {}) {
  TaskSpec t;
  t.name = std::move(name);
  t.after = std::move(after);
  return t;
}
}  // namespace

TEST_CASE("Core.WorkflowGraph.AcceptsDag") {
  WorkflowGraph g;
  g.add(named("a"));
  g.add(named("b", {0}));
  g.add(named("c", {0, 1}));
  CHECK(validate_graph(g).ok());
  auto deps = dependents_of(g);
  CHECK(deps[0] == std::vector<TaskId>{1, 2});
}

TEST_CASE("Core.WorkflowGraph.PrintsCycle") {
  WorkflowGraph g;
  g.add(named("a", {1}));
  g.add(named("b", {0}));
  auto s = validate_graph(g);
  REQUIRE(!s.ok());
  CHECK(s.message().find("cycle") != std::string::npos);
  bool ab = s.message().find("a -> b -> a") != std::string::npos;
  bool ba = s.message().find("b -> a -> b") != std::string::npos;
  CHECK((ab || ba));
}

TEST_CASE("Core.WorkflowGraph.RejectsDuplicateNames") {
  WorkflowGraph g;
  g.add(named("a"));
  g.add(named("a"));
  CHECK(validate_graph(g).message().find("duplicate") != std::string::npos);
}

TEST_CASE("Core.Text.SuggestsCloseWords") {
  CHECK(did_you_mean("comand", {"command", "cores", "after"}) == " (did you mean 'command'?)");
  CHECK(did_you_mean("zzzzzz", {"command", "cores"}).empty());
}

TEST_CASE("Core.Text.SuggestsSwapsAndAbbreviations") {
  CHECK(closest_match("trian", {"train", "test"}) == "train");
  CHECK(closest_match("prep", {"prepare", "report"}) == "prepare");
  CHECK(closest_match("pre", {"prepare", "present"}).empty());  // ambiguous abbreviation
}
