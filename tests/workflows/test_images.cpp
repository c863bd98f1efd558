// `image:` and `image_pull_policy:` (tasks, services, repeat members, defaults), the image
// reference and pull policy checks, and WorkflowLoadOptions::containers' refusals.
#include <doctest/doctest.h>

#include "support/workflow_parsing.hpp"
#include "workflows/image_reference.hpp"

using namespace chorus;
using chorus::test::error_of;
using chorus::test::find_task;
using chorus::test::parse;
using chorus::test::test_options;

namespace {

const std::string kDigest =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

WorkflowLoadOptions containers() {
  WorkflowLoadOptions o = test_options();
  o.containers = true;
  return o;
}

// Two nodes of 8 cores: an MPI task of 16 ranks spreads over both.
WorkflowLoadOptions allocation(bool with_containers) {
  WorkflowLoadOptions o = test_options();
  o.largest_node = {8, 0, 0};
  o.machine_phrase = "the largest node of this allocation";
  o.nodes = {{8, 0, 0}, {8, 0, 0}};
  o.containers = with_containers;
  return o;
}

}  // namespace

TEST_CASE("Workflows.Images.ReferenceGrammar") {
  for (const std::string& ok : std::vector<std::string>{
           "busybox", "busybox:1.35", "library/busybox:latest", "docker.io/library/busybox",
           "localhost/app", "localhost:5000/app:dev", "registry.example.com:5000/team/db",
           "ghcr.io/org/my_tool__x.y-z---w:V2_rc.1", "python@" + kDigest,
           "python:3.12-slim@" + kDigest, "My-Registry.example.com/app"}) {
    CAPTURE(ok);
    CHECK(image_reference_problem(ok).empty());
  }
  CHECK(image_reference_problem("Busybox:1.35") == "the repository 'Busybox' must be lowercase");
  CHECK(image_reference_problem("busy box") == "it must not contain spaces or control characters");
  CHECK(image_reference_problem("") == "it is empty");
  CHECK(image_reference_problem("busybox:-1") ==
        "the tag '-1' must be 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' "
        "or '-'");
  CHECK(image_reference_problem("busybox:" + std::string(129, 'a')).find("the tag") == 0);
  CHECK(image_reference_problem("busybox:" + std::string(128, 'a')).empty());
  CHECK(image_reference_problem("busybox:").find("the tag ''") == 0);
  CHECK(image_reference_problem("busybox@sha256:abc") ==
        "the digest 'sha256:abc' must be sha256: followed by 64 lowercase hex digits");
  CHECK(image_reference_problem("a..b") ==
        "the repository component 'a..b' must be lowercase letters and digits joined by '.', "
        "'_', '__' or '-'");
  CHECK(!image_reference_problem("a___b").empty());
  CHECK(!image_reference_problem("-a").empty());
  CHECK(!image_reference_problem("a-").empty());
  CHECK(image_reference_problem("team//app") == "it has an empty path component (a '/' too many)");
  CHECK(image_reference_problem("reg-.io/app") ==
        "the registry 'reg-.io' must be a host name with an optional :port");
  CHECK(!image_reference_problem("localhost:port/app").empty());
  CHECK(image_reference_problem(":tag") == "it has no repository name");
  CHECK(is_image_pull_policy("Always"));
  CHECK(is_image_pull_policy("IfNotPresent"));
  CHECK(is_image_pull_policy("Never"));
  CHECK(!is_image_pull_policy("always"));
}

TEST_CASE("Workflows.Images.KeysReadOnTasksServicesDefaultsAndMembers") {
  auto g = parse(R"Y(defaults: {image: "busybox:1.35", image_pull_policy: IfNotPresent}
services:
  - name: db
    command: [./db]
    ready: {file: db.ready}
    image: registry.example.com:5000/team/db@)Y" +
                 kDigest + R"Y(
    image_pull_policy: Never
  - name: cache
    command: [./cache]
    ready: {file: cache.ready}
tasks:
  - name: a
    command: [x]
  - name: b
    command: [x]
    image: ghcr.io/org/tool:v2
    image_pull_policy: Always
  - name: py
    foreach: {v: ["11", "12"]}
    command: [x]
    image: "python:3.{v}"
  - repeat: loop
    max_rounds: 2
    until: {file: "r-{round}/m.json", key: /done, equals: true}
    tasks:
      - name: step
        command: [x]
        image: "worker:r{round}"
)Y");
  REQUIRE(g.ok());
  const TaskSpec* a = find_task(*g, "a");
  REQUIRE(a != nullptr);
  CHECK(a->image == "busybox:1.35");  // from defaults
  CHECK(a->image_pull_policy == "IfNotPresent");
  const TaskSpec* b = find_task(*g, "b");
  REQUIRE(b != nullptr);
  CHECK(b->image == "ghcr.io/org/tool:v2");  // the task's own value overrides defaults
  CHECK(b->image_pull_policy == "Always");
  const TaskSpec* py = find_task(*g, "py[v=12]");
  REQUIRE(py != nullptr);
  CHECK(py->image == "python:3.12");  // placeholders substituted like the command's
  const TaskSpec* db = find_task(*g, "db");
  REQUIRE(db != nullptr);
  CHECK(db->kind == TaskKind::service);
  CHECK(db->image == "registry.example.com:5000/team/db@" + kDigest);
  CHECK(db->image_pull_policy == "Never");
  const TaskSpec* cache = find_task(*g, "cache");
  REQUIRE(cache != nullptr);
  CHECK(cache->image == "busybox:1.35");
  CHECK(cache->image_pull_policy == "IfNotPresent");
  bool step = false;
  for (const TaskSpec& t : g->tasks) {
    if (t.name.rfind("step", 0) != 0) continue;
    step = true;
    CHECK(t.image == "worker:r1");
    CHECK(t.image_pull_policy == "IfNotPresent");
  }
  CHECK(step);
  // Later rounds come from the blueprint, with their own round substituted.
  REQUIRE(g->repeats.size() == 1);
  auto round2 = g->repeats[0].expand(2);
  REQUIRE(round2.ok());
  REQUIRE(!round2->tasks.empty());
  CHECK(round2->tasks[0].image == "worker:r2");

  auto none = parse("tasks:\n  - name: a\n    command: [x]\n");
  REQUIRE(none.ok());
  CHECK(none->tasks[0].image.empty());
  CHECK(none->tasks[0].image_pull_policy.empty());
}

TEST_CASE("Workflows.Images.ErrorsAreLocated") {
  CHECK(error_of("tasks:\n  - name: a\n    command: [x]\n    image_pull_policy: sometimes\n") ==
        "wf.yaml:4:24: image_pull_policy in task 'a' must be Always, IfNotPresent or Never, not "
        "'sometimes'");
  CHECK(error_of("tasks:\n  - {name: a, command: [x], image_pull_policy: always}\n") ==
        "wf.yaml:2:48: image_pull_policy in task 'a' must be Always, IfNotPresent or Never, not "
        "'always' (did you mean 'Always'?)");
  CHECK(error_of("tasks:\n  - name: a\n    command: [x]\n    image: Busybox:1.35\n") ==
        "wf.yaml:4:12: image 'Busybox:1.35' in task 'a' is not an image reference: the "
        "repository 'Busybox' must be lowercase");
  CHECK(error_of("tasks:\n  - name: a\n    command: [x]\n    image: busy box\n") ==
        "wf.yaml:4:12: image 'busy box' in task 'a' is not an image reference: it must not "
        "contain spaces or control characters");
  CHECK(error_of("defaults: {image: \"a..b\"}\ntasks:\n  - {name: a, command: [x]}\n") ==
        "wf.yaml:1:19: image 'a..b' in defaults is not an image reference: the repository "
        "component 'a..b' must be lowercase letters and digits joined by '.', '_', '__' or '-'");
  CHECK(
      error_of("defaults: {image_pull_policy: Sometimes}\ntasks:\n  - {name: a, command: [x]}\n") ==
      "wf.yaml:1:31: image_pull_policy in defaults must be Always, IfNotPresent or Never, not "
      "'Sometimes'");
  CHECK(error_of("services:\n  - name: s\n    command: [x]\n    ready: {file: r}\n"
                 "    image: \"x:\"\ntasks:\n  - {name: a, command: [x]}\n") ==
        "wf.yaml:5:12: image 'x:' in service 's' is not an image reference: the tag '' must be 1 "
        "to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'");
  // With placeholders the member's value is checked, at the template's image.
  CHECK(error_of("tasks:\n  - name: a\n    foreach: {v: [ok, Bad]}\n    command: [x]\n"
                 "    image: \"app:{v}-1\"\n") == "");
  CHECK(error_of("tasks:\n  - name: a\n    foreach: {v: [ok, Bad]}\n    command: [x]\n"
                 "    image: \"{v}/app\"\n") ==
        "wf.yaml:5:12: image 'Bad/app' in task 'a[v=Bad]' is not an image reference: the "
        "repository 'Bad' must be lowercase");
  CHECK(error_of("tasks:\n  - name: a\n    command: [x]\n    image: \"app:{nope}\"\n")
            .find("wf.yaml:4:12: ") == 0);
  // Misplaced: on a repeat group, at the top level.
  CHECK(error_of("tasks:\n  - repeat: g\n    max_rounds: 2\n    image: busybox\n"
                 "    until: {file: f.json, key: /k, equals: true}\n"
                 "    tasks:\n      - {name: s, command: [x]}\n")
            .find("wf.yaml:4:5: 'image' belongs in a task of the repeat group's 'tasks:'") == 0);
  CHECK(error_of("image: busybox\ntasks:\n  - {name: a, command: [x]}\n")
            .find("wf.yaml:1:1: 'image' cannot be set at the top level; put it under "
                  "'defaults:'") == 0);
}

TEST_CASE("Workflows.Images.ContainersNeedAnImage") {
  const std::string bare =
      "services:\n  - name: s\n    command: [x]\n    ready: {file: r}\n"
      "tasks:\n  - name: a\n    command: [x]\n    uses: [s]\n"
      "  - name: b\n    foreach: {i: \"range(0, 2)\"}\n    command: [x]\n";
  // Without the option nothing changes.
  CHECK(parse(bare).ok());
  CHECK(error_of(bare, containers()) ==
        "wf.yaml:2:11: service 's' has no image: set image: on the task or in defaults: (the "
        "Kubernetes backend runs every task in a container)\n"
        "wf.yaml:6:11: task 'a' has no image: set image: on the task or in defaults: (the "
        "Kubernetes backend runs every task in a container)\n"
        "wf.yaml:9:11: sweep 'b' has no image: set image: on the task or in defaults: (the "
        "Kubernetes backend runs every task in a container)");
  CHECK(parse("defaults: {image: busybox}\n" + bare, containers()).ok());
  // A repeat group's gate is a function task: only its members need the image.
  CHECK(parse("tasks:\n  - repeat: g\n    max_rounds: 2\n"
              "    until: {file: f.json, key: /k, equals: true}\n"
              "    tasks:\n      - {name: s, command: [x], image: busybox}\n",
              containers())
            .ok());
}

TEST_CASE("Workflows.Images.ContainersKeepMpiRanksOnOneNode") {
  const std::string message =
      "an MPI task across Pods needs the MPI Operator, which chorus does not support yet; keep "
      "its ranks on one node (nodes: 1)";
  const std::string head = "defaults: {image: busybox}\ntasks:\n";
  const std::string spread = head + "  - {name: m, kind: mpi, ranks: 4, nodes: 2, command: [x]}\n";
  const std::string wide = head + "  - {name: m, kind: mpi, ranks: 16, command: [x]}\n";
  const std::string fits = head + "  - {name: m, kind: mpi, ranks: 8, command: [x]}\n";
  // Without the option both spread over the two nodes.
  CHECK(parse(spread, allocation(false)).ok());
  CHECK(parse(wide, allocation(false)).ok());
  CHECK(error_of(spread, allocation(true)) == "wf.yaml:3:43: " + message);
  CHECK(error_of(wide, allocation(true)) == "wf.yaml:3:33: " + message);
  CHECK(parse(fits, allocation(true)).ok());
  CHECK(
      parse(head + "  - {name: m, kind: mpi, ranks: 8, nodes: 1, command: [x]}\n", allocation(true))
          .ok());
  // One machine (no node list): the largest node is the limit.
  CHECK(error_of(head + "  - {name: m, kind: mpi, ranks: 4, cores_per_rank: 4, command: [x]}\n",
                 containers()) == "wf.yaml:3:33: " + message);
  // nodes: 1 that cannot fit stays the ordinary "can never run here".
  CHECK(
      error_of(head + "  - {name: m, kind: mpi, ranks: 16, nodes: 1, command: [x]}\n", containers())
          .find("can never run here") != std::string::npos);
}

TEST_CASE("Workflows.Images.ContainersRefuseAStdoutProbe") {
  const std::string wf =
      "defaults: {image: busybox}\nservices:\n  - name: s\n    command: [x]\n"
      "    ready: {stdout: 'listening on (\\S+)'}\n"
      "tasks:\n  - {name: a, command: [x], uses: [s]}\n";
  // Without the option the coordinator reads the replica's stdout itself.
  CHECK(parse(wf).ok());
  CHECK(error_of(wf, containers()) ==
        "wf.yaml:5:12: service 's' has a stdout probe, which Kubernetes cannot run as a "
        "readinessProbe; use a tcp, http or file probe");
  for (const char* probe : {"{tcp: 9000}", "{http: 9000, path: /h}", "{file: up}"}) {
    std::string other = wf;
    other.replace(other.find("{stdout"),
                  other.find('}', other.find("{stdout")) + 1 - other.find("{stdout"), probe);
    CAPTURE(other);
    CHECK(parse(other, containers()).ok());
  }
}
