#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "workflows/wfcommons_export.hpp"
#include "workflows/wfcommons_reader.hpp"
#include "workflows/workflow_loader.hpp"

using namespace chorus;

namespace {

const std::string kData = std::string(CHORUS_SOURCE_DIR) + "/../shared/data/wfcommons/";

// A minimal 1.5 instance: a -> b, a -> c; `extra` is spliced into b's specification entry.
std::string v15(const std::string& b_parents = R"("parents": ["a"])",
                const std::string& c_runtime = R"("runtimeInSeconds": 3.0)",
                const std::string& version = "1.5") {
  return R"({"name": "tiny", "schemaVersion": ")" + version + R"(", "workflow": {
    "specification": {
      "tasks": [
        {"name": "a", "id": "a", "parents": [], "children": ["b", "c"],
         "inputFiles": [], "outputFiles": ["f1"]},
        {"name": "b", "id": "b", )" +
         b_parents + R"(, "children": [],
         "inputFiles": ["f1"], "outputFiles": []},
        {"name": "c", "id": "c", "parents": ["a"], "children": [],
         "inputFiles": ["f1"], "outputFiles": []}],
      "files": [{"id": "f1", "sizeInBytes": 2048}]},
    "execution": {"makespanInSeconds": 5, "executedAt": "x", "machines": [],
      "tasks": [
        {"id": "a", "runtimeInSeconds": 1.5, "coreCount": 4, "memoryInBytes": 3000000},
        {"id": "b", "runtimeInSeconds": 2.0},
        {"id": "c", )" +
         c_runtime + R"(}]}}})";
}

}  // namespace

TEST_CASE("Planners.WfCommons.ImportsEveryBundledInstanceWithReadmeCounts") {
  struct Expect {
    const char* file;
    std::size_t tasks;
    std::size_t edges;
  };
  const Expect table[] = {
      {"srasearch-chameleon-10a-001.json", 22, 30},
      {"blast-chameleon-small-001.json", 43, 120},
      {"cycles-chameleon-1l-1c-9p-001.json", 67, 97},
      {"seismology-chameleon-100p-001.json", 101, 100},
      {"montage-chameleon-2mass-015d-001.json", 310, 798},
      {"1000genome-chameleon-22ch-250k-001.json", 902, 1166},
      {"epigenomics-chameleon-ilmn-5seq-50k-001.json", 1397, 1737},
  };
  for (const auto& e : table) {
    CAPTURE(e.file);
    auto inst = read_wfcommons_file(kData + e.file);
    REQUIRE_MESSAGE(inst.ok(), inst.status().message());
    CHECK(inst->schema_version == "1.5");
    CHECK(inst->graph.tasks.size() == e.tasks);
    CHECK(inst->edge_count == e.edges);
    std::size_t after_total = 0;
    for (const auto& t : inst->graph.tasks) {
      after_total += t.after.size();
      CHECK(t.per_rank.cores >= 1);
      CHECK(t.estimate.count() >= 0);
    }
    CHECK(after_total == e.edges);
    CHECK(validate_graph(inst->graph).ok());
  }
}

TEST_CASE("Planners.WfCommons.ReadsFieldsOfATinyInstance") {
  auto inst = parse_wfcommons(v15(), "tiny.json");
  REQUIRE_MESSAGE(inst.ok(), inst.status().message());
  const auto& g = inst->graph;
  REQUIRE(g.tasks.size() == 3);
  CHECK(g.tasks[0].per_rank.cores == 4);
  CHECK(g.tasks[0].per_rank.memory_mb == 3);  // 3,000,000 bytes rounded up to whole MiB
  CHECK(g.tasks[1].per_rank.cores == 1);      // coreCount absent: 1
  CHECK(std::chrono::duration<double>(g.tasks[0].estimate).count() == doctest::Approx(1.5));
  CHECK(g.tasks[1].after == std::vector<TaskId>{0});
  CHECK(g.tasks[0].outputs == std::vector<std::string>{"f1"});
  CHECK(inst->file_size.at("f1") == 2048);
  CHECK(g.tasks[2].cmd.argv == std::vector<std::string>{"sleep", "3"});
}

TEST_CASE("Planners.WfCommons.DerivesEdgesFromFilesWhenParentsAbsent") {
  auto inst = parse_wfcommons(v15(R"("x": 0)"), "tiny.json");
  REQUIRE_MESSAGE(inst.ok(), inst.status().message());
  CHECK(inst->graph.tasks[1].after == std::vector<TaskId>{0});  // f1's producer
  CHECK(inst->edge_count == 2);
}

TEST_CASE("Planners.WfCommons.RejectsBadInput") {
  SUBCASE("unknown parent") {
    auto r = parse_wfcommons(v15(R"("parents": ["zz"])"), "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "w.json: workflow.specification.tasks[1].parents[0]: task 'b' names unknown parent "
          "'zz'");
  }
  SUBCASE("cycle") {
    // b after c and c after b.
    std::string text = v15(R"("parents": ["c"])");
    const std::string c_entry = R"("id": "c", "parents": ["a"])";
    text.replace(text.find(c_entry), c_entry.size(), R"("id": "c", "parents": ["b"])");
    auto r = parse_wfcommons(text, "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("dependency cycle") != std::string::npos);
  }
  SUBCASE("missing runtime") {
    auto r = parse_wfcommons(v15(R"("parents": ["a"])", R"("coreCount": 1)"), "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("task 'c' has no runtimeInSeconds") != std::string::npos);
  }
  SUBCASE("unknown schema version") {
    auto r =
        parse_wfcommons(v15(R"("parents": ["a"])", R"("runtimeInSeconds": 1)", "9.9"), "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("schema version '9.9' is not supported") != std::string::npos);
  }
  SUBCASE("bad JSON names line and byte") {
    auto r = parse_wfcommons("{\n  \"name\": \"x\",\n  oops }", "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().rfind("w.json:3:", 0) == 0);
    CHECK(r.status().message().find("at byte") != std::string::npos);
  }
  SUBCASE("unreadable file") {
    auto r = read_wfcommons_file("/nonexistent/dir/x.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::not_found);
    CHECK(r.status().message() ==
          "/nonexistent/dir/x.json: cannot open: No such file or directory");
  }
}

TEST_CASE("Planners.WfCommons.ReadsTheOlderLayout") {
  const std::string text = R"({"name": "old", "schemaVersion": "1.4", "workflow": {"tasks": [
    {"name": "a", "id": "a", "parents": [], "runtimeInSeconds": 2, "cores": 2,
     "files": [{"link": "output", "name": "f", "sizeInBytes": 10}]},
    {"name": "b", "id": "b", "runtimeInSeconds": 1,
     "files": [{"link": "input", "name": "f", "sizeInBytes": 10}]}]}})";
  auto inst = parse_wfcommons(text, "old.json");
  REQUIRE_MESSAGE(inst.ok(), inst.status().message());
  CHECK(inst->graph.tasks[0].per_rank.cores == 2);
  CHECK(inst->graph.tasks[1].after == std::vector<TaskId>{0});
  CHECK(inst->graph.tasks[1].inputs == std::vector<std::string>{"f"});
}

TEST_CASE("Planners.WfCommons.ExportsSleepReplayYaml") {
  auto inst = parse_wfcommons(v15(), "tiny.json");
  REQUIRE(inst.ok());
  const std::string yaml = wfcommons_to_yaml(inst->graph);
  CHECK(yaml.find(R"(command: ["sleep", "1.5"])") != std::string::npos);
  CHECK(yaml.find("estimate: 1.5s") != std::string::npos);
  CHECK(yaml.find("cores: 4") != std::string::npos);
  CHECK(yaml.find("after: [a]") != std::string::npos);
}

TEST_CASE("Planners.WfCommons.ExportOfEveryInstanceLoadsBackAsAWorkflow") {
  for (const char* f : {"srasearch-chameleon-10a-001.json", "montage-chameleon-2mass-015d-001.json",
                        "epigenomics-chameleon-ilmn-5seq-50k-001.json"}) {
    CAPTURE(f);
    auto inst = read_wfcommons_file(kData + f);
    REQUIRE(inst.ok());
    auto loaded = parse_workflow_text(wfcommons_to_yaml(inst->graph), "wf.yaml", {});
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
    REQUIRE(loaded->tasks.size() == inst->graph.tasks.size());
    std::size_t edges = 0;
    for (std::size_t t = 0; t < loaded->tasks.size(); ++t) {
      const auto& a = loaded->tasks[t];
      const auto& b = inst->graph.tasks[t];
      CHECK(a.name == b.name);
      CHECK(a.estimate == b.estimate);
      CHECK(a.cmd.argv == b.cmd.argv);
      edges += a.after.size();
    }
    CHECK(edges == inst->edge_count);
  }
}

TEST_CASE("Planners.WfCommons.ExportRewritesNamesTheLoaderRefuses") {
  WorkflowGraph g;
  TaskSpec a;
  a.name = "x[1]/{y}";
  g.add(a);
  TaskSpec b;
  b.name = "x_1___y_";  // what the first name becomes: the rewrite keeps names unique
  b.after = {0};
  g.add(b);
  auto loaded = parse_workflow_text(wfcommons_to_yaml(g), "wf.yaml", {});
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(loaded->tasks[0].name == "x_1___y_");
  CHECK(loaded->tasks[1].name == "x_1___y__2");
  CHECK(loaded->tasks[1].after == std::vector<TaskId>{0});
}

TEST_CASE("Planners.WfCommons.OverflowingNumberIsAnErrorNotACrash") {
  auto r = parse_wfcommons(R"J({"schemaVersion": "1.5", "workflow": {"x": 1e999}})J", "big.json");
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("big.json: invalid JSON") != std::string::npos);
}

TEST_CASE("Planners.WfCommons.OutOfRangeNumbersAreRefusedWithTheirJsonPath") {
  SUBCASE("cores") {
    auto r = parse_wfcommons(
        v15(R"("parents": ["a"])", R"("runtimeInSeconds": 3.0, "coreCount": 1e300)"), "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.execution.tasks[2].coreCount: 1e+300 is out of range (1..1048576)");
  }
  SUBCASE("runtime") {
    auto r = parse_wfcommons(v15(R"("parents": ["a"])", R"("runtimeInSeconds": 1e300)"), "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.execution.tasks[2].runtimeInSeconds: 1e+300 is out of range "
          "(0..1e9 seconds)");
    r = parse_wfcommons(v15(R"("parents": ["a"])", R"("runtimeInSeconds": -5)"), "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.execution.tasks[2].runtimeInSeconds: -5 is out of range "
          "(0..1e9 seconds)");
  }
  SUBCASE("memory") {
    auto r = parse_wfcommons(
        v15(R"("parents": ["a"])", R"("runtimeInSeconds": 3, "memoryInBytes": 1e30)"), "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.execution.tasks[2].memoryInBytes: 1e+30 is out of range (0..2^53 "
          "bytes)");
  }
  SUBCASE("a number of the wrong type") {
    auto r = parse_wfcommons(
        v15(R"("parents": ["a"])", R"("runtimeInSeconds": 3, "coreCount": "4")"), "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.execution.tasks[2].coreCount: must be a number, got a string");
  }
  SUBCASE("file size") {
    std::string text = v15();
    text.replace(text.find("2048"), 4, "-1e20");
    auto r = parse_wfcommons(text, "t.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "t.json: workflow.specification.files[0].sizeInBytes: -1e+20 is out of range (0..2^53 "
          "bytes)");
  }
  SUBCASE("the largest values in range convert exactly") {
    auto r = parse_wfcommons(
        v15(R"("parents": ["a"])", R"("runtimeInSeconds": 1e9, "coreCount": 1048576)"), "t.json");
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    CHECK(r->graph.tasks[2].per_rank.cores == 1048576);
    CHECK(r->graph.tasks[2].estimate == std::chrono::seconds(1'000'000'000));
  }
}

TEST_CASE("Planners.WfCommons.ParentsOfTheWrongTypeAreRefusedNotDropped") {
  auto r = parse_wfcommons(v15(R"("parents": "a")"), "t.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "t.json: workflow.specification.tasks[1].parents: must be a list of ids (strings), got a "
        "string");
  r = parse_wfcommons(v15(R"("parents": ["a", 7])"), "t.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "t.json: workflow.specification.tasks[1].parents[1]: must be an id (a string), got a "
        "number");
  const std::string old = R"({"schemaVersion": "1.4", "workflow": {"tasks": [
    {"name": "a", "runtime": 1}, {"name": "b", "runtime": 1, "parents": {"a": 1}}]}})";
  r = parse_wfcommons(old, "old.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "old.json: workflow.tasks[1].parents: must be a list of ids (strings), got an object");
}

TEST_CASE("Planners.WfCommons.SemanticErrorsNameTheirJsonPath") {
  SUBCASE("missing runtime") {
    auto r = parse_wfcommons(v15(R"("parents": ["a"])", R"("coreCount": 1)"), "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "w.json: workflow.execution.tasks[2]: task 'c' has no runtimeInSeconds (needed as its "
          "estimate)");
  }
  SUBCASE("duplicate id") {
    std::string text = v15();
    const std::string c_entry = R"("name": "c", "id": "c")";
    text.replace(text.find(c_entry), c_entry.size(), R"("name": "c", "id": "b")");
    auto r = parse_wfcommons(text, "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "w.json: workflow.specification.tasks[2].id: duplicate task id 'b' (also "
          "workflow.specification.tasks[1])");
  }
  SUBCASE("cycle") {
    std::string text = v15(R"("parents": ["c"])");
    const std::string c_entry = R"("id": "c", "parents": ["a"])";
    text.replace(text.find(c_entry), c_entry.size(), R"("id": "c", "parents": ["b"])");
    auto r = parse_wfcommons(text, "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "w.json: workflow.specification.tasks[1].parents: dependency cycle: b -> c -> b");
  }
  SUBCASE("no tasks") {
    auto r = parse_wfcommons(
        R"({"schemaVersion": "1.5", "workflow": {"specification": {"tasks": []}}})", "w.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "w.json: workflow.specification.tasks: the workflow has no tasks");
  }
  SUBCASE("not a regular file") {
    auto r = read_wfcommons_file("/tmp");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "/tmp: is a directory, not a WfCommons trace");
  }
}
