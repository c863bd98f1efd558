// UserCapQueue: a served instance's per-user running_cores limit around another queue policy.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedulers/queue/fifo_queue.hpp"
#include "schedulers/queue/user_cap_queue.hpp"

using namespace chorus;

namespace {

// Tasks by id on one node of 64 cores; the cap of each user from `caps` (absent = none).
struct Harness {
  explicit Harness(std::map<std::string, std::int64_t> caps)
      : node{"n0", Resources{64, 0, 0}},
        queue(std::make_unique<FifoQueue>(),
              [caps = std::move(caps)](const std::string& user) -> std::optional<std::int64_t> {
                auto it = caps.find(user);
                if (it == caps.end()) return std::nullopt;
                return it->second;
              }) {
    view.info = &node;
    view.free = node.capacity;
  }
  TaskId add(const std::string& user, int cores = 1) {
    TaskSpec t;
    t.id = static_cast<TaskId>(tasks.size());
    t.name = user + std::to_string(t.id);
    t.user = user;
    t.per_rank = Resources{cores, 0, 0};
    tasks.push_back(t);
    queue.on_ready(tasks.back(), TimePoint{});
    return t.id;
  }
  // Starts every task the queue offers now; their names in order.
  std::vector<std::string> start_all() {
    std::vector<std::string> started;
    ClusterView c{std::span<const NodeView>(&view, 1), TimePoint{}};
    while (auto id = queue.next(c)) {
      queue.on_start(tasks[*id], TimePoint{});
      started.push_back(tasks[*id].name);
    }
    return started;
  }
  void finish(TaskId id) { queue.on_finish(tasks[id], TaskState::succeeded, {}, TimePoint{}); }

  NodeInfo node;
  NodeView view;
  UserCapQueue queue;
  std::vector<TaskSpec> tasks;
};

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("Schedulers.UserCap.HoldsACappedUsersTasksAndReleasesThemInOrder") {
  Harness h({{"alice", 2}});
  for (int i = 0; i < 4; ++i) h.add("alice");  // alice0..alice3
  h.add("bob");                                // bob4: no cap
  CHECK(h.queue.size() == 5);
  CHECK(h.queue.held() == 2);
  CHECK(h.start_all() == Names{"alice0", "alice1", "bob4"});
  CHECK(h.queue.size() == 2);
  h.finish(1);
  CHECK(h.start_all() == Names{"alice2"});
  h.finish(4);  // bob's end frees nothing of alice's
  CHECK(h.start_all().empty());
  h.finish(0);
  CHECK(h.start_all() == Names{"alice3"});
  CHECK(h.queue.held() == 0);
  CHECK(h.queue.size() == 0);
}

TEST_CASE("Schedulers.UserCap.CountsCoresNotTasks") {
  Harness h({{"alice", 4}});
  h.add("alice", 3);
  h.add("alice", 2);  // 3 + 2 > 4: held
  h.add("alice", 1);  // behind a held task: held too, in ready order
  CHECK(h.queue.held() == 2);
  CHECK(h.start_all() == Names{"alice0"});
  h.finish(0);
  CHECK(h.start_all() == Names{"alice1", "alice2"});
}

TEST_CASE("Schedulers.UserCap.ATaskPastTheCapGoesAloneWhenNothingOfItsUserIsIn") {
  Harness h({{"alice", 2}});
  h.add("alice", 8);
  h.add("alice", 1);
  CHECK(h.start_all() == Names{"alice0"});
  CHECK(h.queue.held() == 1);
  h.finish(0);
  CHECK(h.start_all() == Names{"alice1"});
}

TEST_CASE("Schedulers.UserCap.RemovingAHeldTaskForgetsItAndARetryMayComeBack") {
  Harness h({{"alice", 1}});
  h.add("alice");
  const TaskId held = h.add("alice");
  h.add("alice");
  CHECK(h.queue.held() == 2);
  h.queue.remove(held);
  CHECK(h.queue.held() == 1);
  CHECK(h.queue.size() == 2);
  CHECK(h.start_all() == Names{"alice0"});
  h.finish(0);
  CHECK(h.start_all() == Names{"alice2"});
  // The removed task becomes ready again (a retry): it queues once, not twice.
  h.queue.on_ready(h.tasks[held], TimePoint{});
  CHECK(h.queue.held() == 1);
  h.finish(2);
  CHECK(h.start_all() == Names{"alice1"});
  CHECK(h.queue.size() == 0);
}

TEST_CASE("Schedulers.UserCap.RemovingAnAdmittedTaskReleasesTheNext") {
  Harness h({{"alice", 1}});
  const TaskId first = h.add("alice");
  h.add("alice");
  h.queue.remove(first);  // cancelled while queued in the inner policy
  CHECK(h.queue.held() == 0);
  CHECK(h.start_all() == Names{"alice1"});
}
