// Queue policies live: the same policy objects the simulator uses order a real run.
#include <doctest/doctest.h>

#include <algorithm>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

// Two users in one coordinator: alice floods it with 200 long tasks first, bob submits 5 short
// ones after. Returns the position (in start order, 0-based) at which each of bob's tasks started.
std::vector<std::size_t> bob_positions(const std::string& queue) {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: shared
scheduler: {queue: )Y" + queue + R"Y(}
tasks:
  - name: flood
    user: alice
    foreach: {i: "range(0, 200)"}
    command: "echo alice >> starts.log; sleep 0.02"
    estimate: 20s
  - name: quick
    user: bob
    foreach: {i: "range(0, 5)"}
    command: "echo bob >> starts.log"
    estimate: 0.1s
)Y");
  auto r = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto lines = read_lines(dir / "starts.log");
  REQUIRE(lines.size() == 205);
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == "bob") positions.push_back(i);
  }
  return positions;
}

}  // namespace

TEST_CASE("Integration.FairShare.FifoMakesShortTasksWaitForTheFlood") {
  auto bob = bob_positions("fifo");
  REQUIRE(bob.size() == 5);
  CHECK(bob.front() >= 195);  // every one of alice's tasks started before bob's first
}

TEST_CASE("Integration.FairShare.UwfqRunsTheShortTasksEarly") {
  auto bob = bob_positions("uwfq");
  REQUIRE(bob.size() == 5);
  CHECK(bob.back() < 20);  // bob's last task started among the first few, not after the flood
}

// `chorus run --queue` replaces the file's queue policy: the file's options are checked against
// the policy that will run, so weights for uwfq are not refused as fifo's, and the other way
// round they are refused at their place in the file.
TEST_CASE("Integration.FairShare.QueueFlagChoosesWhoseOptionsTheFileHas") {
  TempDir dir;
  write_file(dir / "wf.yaml", R"Y(name: flagged
scheduler: {queue: fifo, weights: {alice: 2}}
tasks:
  - {name: a, user: alice, command: [true]}
)Y");
  auto refused = run_chorus({"run", "wf.yaml"}, dir.path());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("wf.yaml:2:26: queue policy 'fifo' takes no option 'weights'") !=
        std::string::npos);
  auto ran = run_chorus({"run", "wf.yaml", "--queue", "uwfq"}, dir.path());
  INFO(ran.err);
  CHECK(ran.exit_code == 0);
}
