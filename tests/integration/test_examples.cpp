// The examples work as their READMEs say: quickstart through the CLI, embed against the
// installed package (cmake --install, find_package(chorus)), embed_agents on real agents it
// starts itself.
#include <doctest/doctest.h>

#include <filesystem>

#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Integration.Examples.QuickstartPrintsResult") {
  auto r = run_process({binary_dir() + "/examples/quickstart/run_quickstart.sh"}, binary_dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("result: rows=100000 parts=64 mean=") != std::string::npos);
  CHECK(r.err.find("66 tasks: 66 succeeded") != std::string::npos);
}

// The flagship: MPI simulations, a surrogate service and 200 scoring tasks per round, in rounds.
TEST_CASE("Integration.Examples.HybridActiveLearningLoopRunsRoundsAndWritesItsReport") {
  auto r = run_process({binary_dir() + "/examples/hybrid/run_hybrid.sh"}, binary_dir());
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("hybrid-1: succeeded") != std::string::npos);
  auto table = r.out.find("surrogate RMSE per round:");
  REQUIRE(table != std::string::npos);
  CHECK(r.out.find("\n    2 ", table) != std::string::npos);  // at least two rounds ran
  auto report = r.out.find("report: ");
  REQUIRE(report != std::string::npos);
  std::string path = r.out.substr(report + 8);
  path = path.substr(0, path.find('\n'));
  CHECK(file_exists(path));
  std::string html = read_file(path);
  CHECK(html.find("\"service\"") != std::string::npos);
}

TEST_CASE("Integration.Examples.EmbedBuildsAgainstInstalledPackage") {
  TempDir dir;
  std::string prefix = dir / "prefix";
  auto install = run_process({"cmake", "--install", binary_dir(), "--prefix", prefix}, dir.path());
  INFO(install.err);
  REQUIRE(install.exit_code == 0);
  CHECK(file_exists(prefix + "/include/chorus/chorus.hpp"));
  std::string build = dir / "embed-build";
  auto configure =
      run_process({"cmake", "-S", source_dir() + "/examples/embed", "-B", build, "-G", "Ninja",
                   "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix,
                   CHORUS_TEST_SANITIZE ? "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined"
                                        : "-DCMAKE_CXX_FLAGS="},
                  dir.path());
  INFO(configure.out, configure.err);
  REQUIRE(configure.exit_code == 0);
  auto compile = run_process({"cmake", "--build", build}, dir.path());
  INFO(compile.out);
  REQUIRE(compile.exit_code == 0);
  auto run = run_process({build + "/embed", dir / "state"}, dir.path());
  INFO(run.err);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("run embed-1: succeeded, 259 tasks succeeded") != std::string::npos);
  CHECK(run.out.find("over 100000 numbers") != std::string::npos);
  CHECK(file_exists(dir / "state/chorus.db"));
}

TEST_CASE("Integration.Examples.CustomPolicyRegistersAndRuns") {
  auto r = run_process(
      {binary_dir() + "/examples/custom-policy/custom_policy", "2large2small", "1"}, binary_dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("shortest-first") != std::string::npos);
  CHECK(r.out.find("uwfq") != std::string::npos);
}

// The public API on agents: the program opens the agents backend, starts two real `chorus agent`
// processes from its on_listening hook, runs the workflow on them and stops them.
TEST_CASE("Integration.Examples.EmbedAgentsRunsOnAgentsItStarts") {
  TempDir dir;
  auto r = run_process(
      {binary_dir() + "/examples/embed_agents/embed_agents", chorus_bin(), dir / "state"},
      dir.path());
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);  // the agents too exited 0 (told to by stop())
  CHECK(r.out.find("run embed-agents-1: succeeded, 17 tasks succeeded on 2 agents") !=
        std::string::npos);
  CHECK(r.out.find("agent-1 ran ") != std::string::npos);
  CHECK(r.out.find("agent-2 ran ") != std::string::npos);
  // The run's secret keys are gone with the backend.
  std::error_code ec;
  CHECK(std::filesystem::is_empty(dir / "state/agents", ec));
}

// examples/quorum-ensemble: each round closes on the 6 fastest of 8 simulations.
TEST_CASE("Integration.Examples.QuorumEnsemble") {
  TempDir dir;
  std::filesystem::copy_file(source_dir() + "/examples/quorum-ensemble/ensemble.yaml",
                             dir / "ensemble.yaml");
  auto r = run_chorus({"run", "ensemble.yaml"}, dir.path());
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* round : {"1", "2", "3"}) {
    const std::string ensemble = dir / ("results/round-" + std::string(round) + "-ensemble.txt");
    CHECK(read_lines(ensemble).size() == 6);
    CHECK(std::filesystem::exists(dir / ("results/round-" + std::string(round) + "-quorum.json")));
  }
}
