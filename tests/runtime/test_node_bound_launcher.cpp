// NodeBoundLauncher (runtime/backends/node_bound_launcher.hpp) over a scripted inner launcher:
// work on a node whose agent is lost is stopped and reported lost; other work passes through.
// The same on a real Slurm allocation: Slurm.NodeFaults.MpiStepOnANodeWhoseAgentDiedIs...
#include <doctest/doctest.h>

#include <set>

#include "runtime/backends/node_bound_launcher.hpp"
#include "support/scripted_launcher.hpp"

using namespace chorus;

namespace {

struct Bed {
  test::ManualClock clock;
  test::ScriptedLauncher inner{clock};
  std::set<std::string> dead;
  std::uint64_t losses = 0;
  NodeBoundLauncher bound{
      inner, NodeBoundLauncher::Liveness{
                 [this](std::string_view n) { return dead.count(std::string(n)) == 0; },
                 [this] { return losses; }}};
  std::vector<TaskSpec> specs;

  Bed() {
    for (int i = 0; i < 3; ++i) {
      TaskSpec s;
      s.id = static_cast<TaskId>(i);
      s.name = "mpi" + std::to_string(i);
      specs.push_back(s);
    }
  }
  Result<LaunchHandle> launch(int i, std::vector<NodeRanks> spread) {
    LaunchRequest r;
    r.spec = &specs[static_cast<std::size_t>(i)];
    r.node = spread.front().node;
    if (spread.size() > 1) r.spread = std::move(spread);
    return bound.launch(r);
  }
  void lose(const std::string& node) {
    dead.insert(node);
    ++losses;
  }
  std::vector<StateUpdate> poll() {
    std::vector<StateUpdate> out;
    bound.poll(out);
    return out;
  }
};

}  // namespace

TEST_CASE("Runtime.NodeBound.WorkOnALostNodeIsStoppedAndReportedLost") {
  Bed b;
  REQUIRE(b.launch(0, {{"a", 2}, {"b", 2}}).ok());
  REQUIRE(b.launch(1, {{"c", 4}}).ok());
  CHECK(b.poll().empty());
  b.lose("b");
  auto out = b.poll();
  // mpi0 had ranks on b: cancelled in the inner launcher, its end rewritten as lost.
  CHECK(b.inner.cancels == std::vector<std::string>{"mpi0"});
  REQUIRE(out.size() == 1);
  CHECK(out[0].task == 0);
  CHECK(out[0].kind == UpdateKind::lost);
  CHECK(out[0].signal == 0);
  CHECK(out[0].message ==
        "lost: the agent on node b is lost and this task had ranks there (stopped)");
  // mpi1 (on c only) is untouched and ends as itself.
  CHECK(b.inner.running("mpi1"));
  b.inner.exit("mpi1", 3);
  out = b.poll();
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == UpdateKind::exited);
  CHECK(out[0].exit_code == 3);
}

TEST_CASE("Runtime.NodeBound.ASuccessThatRacedTheStopStaysASuccess") {
  Bed b;
  b.inner.cancel_ends_at_once = false;
  REQUIRE(b.launch(0, {{"a", 1}}).ok());
  b.lose("a");
  CHECK(b.poll().empty());  // cancelled, still running
  CHECK(b.inner.cancels.size() == 1);
  b.lose("zz");  // another loss: mpi0 is not cancelled twice
  CHECK(b.poll().empty());
  CHECK(b.inner.cancels.size() == 1);
  b.inner.exit("mpi0", 0);
  auto out = b.poll();
  REQUIRE(out.size() == 1);
  CHECK(out[0].succeeded());
}

TEST_CASE("Runtime.NodeBound.ALaunchOnANodeAlreadyLostStartsNothing") {
  Bed b;
  b.lose("b");
  auto h = b.launch(2, {{"a", 1}, {"b", 1}});
  REQUIRE(!h.ok());
  CHECK(h.status().code() == ErrorCode::unavailable);
  CHECK(h.status().message() == "the agent on node b is lost");
  CHECK(b.inner.launches.empty());
  // A launch elsewhere goes through.
  CHECK(b.launch(2, {{"a", 1}}).ok());
  CHECK(b.inner.launches.size() == 1);
}
