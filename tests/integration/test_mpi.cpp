// MPI tasks through `chorus run`: real Open MPI, a real MPI program (tests/programs/mpi_hello.c).
#include <doctest/doctest.h>

#include <algorithm>

#include "support/process.hpp"

using namespace chorus::test;

namespace {
std::string mpi_hello() {
  return binary_dir() + "/tests/mpi_hello";
}
}  // namespace

TEST_CASE("Integration.Mpi.RunsEveryRankAndCountsThemAsCores") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "name: mpi\ntasks:\n  - name: hello\n    kind: mpi\n    ranks: 2\n"
             "    cores_per_rank: 1\n    command: [" +
                 mpi_hello() + "]\n");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto logs = run_chorus({"logs", "latest", "hello", "--stdout"}, dir.path());
  auto lines = read_lines(dir / ".chorus/runs/mpi-1/logs/hello.1.out");
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"rank 0 of 2 sum 1", "rank 1 of 2 sum 1"});
  CHECK(logs.out.find("rank 1 of 2") != std::string::npos);
}

TEST_CASE("Integration.Mpi.FailingRankFailsTaskWithItsStderr") {
  TempDir dir;
  write_file(dir / "wf.yaml",
             "name: mpifail\ntasks:\n  - name: sim\n    kind: mpi\n    ranks: 2\n"
             "    command: [" +
                 mpi_hello() + ", fail-rank, \"1\"]\n");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("rank 1 exited with code 3") != std::string::npos);
  CHECK(r.err.find("rank 1: simulated failure") != std::string::npos);
}

TEST_CASE("Integration.Mpi.BadRankCountsAreValidationErrors") {
  TempDir dir;
  write_file(dir / "zero.yaml",
             "name: z\ntasks:\n  - name: z\n    kind: mpi\n    ranks: 0\n    command: [x]\n");
  auto zero = run_chorus({"validate", "zero.yaml"}, dir.path());
  CHECK(zero.exit_code == 2);
  CHECK(zero.err.find("zero.yaml:5:12: 'ranks' in task 'z' must be between 1") !=
        std::string::npos);
  write_file(dir / "big.yaml",
             "name: b\ntasks:\n  - name: b\n    kind: mpi\n    ranks: 4096\n    command: [x]\n");
  auto big = run_chorus({"validate", "big.yaml"}, dir.path());
  CHECK(big.exit_code == 2);
  CHECK(big.err.find("big.yaml:5:12: task 'b' can never run here: needs 4096 ranks x 1 core") !=
        std::string::npos);
  write_file(dir / "noknd.yaml", "name: n\ntasks:\n  - name: n\n    ranks: 2\n    command: [x]\n");
  auto nokind = run_chorus({"validate", "noknd.yaml"}, dir.path());
  CHECK(nokind.exit_code == 2);
  CHECK(nokind.err.find("needs 'kind: mpi'") != std::string::npos);
}
