// UserCapQueue: a queue policy that holds a user's ready tasks back while that user's tasks
// already hold `cap(user)` cores, around any other queue policy (a served instance's per-user
// `running_cores` limit, api/serve_access.hpp). A task reaches the inner policy only when the
// cores of its user's tasks the inner policy has (queued there or running) plus its own stay
// within the cap, so the inner policy's order between users is untouched and a capped user's
// tasks wait in their ready order. A task asking for more than its user's cap is the caller's
// to refuse; here it would wait until none of its user's tasks run, then go alone.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedulers/policy.hpp"

namespace chorus {

class UserCapQueue final : public QueuePolicy {
 public:
  // nullopt from `cap`: no limit for that user. Asked once per user name.
  using CapOf = std::function<std::optional<std::int64_t>(const std::string& user)>;
  UserCapQueue(std::unique_ptr<QueuePolicy> inner, CapOf cap)
      : inner_(std::move(inner)), cap_of_(std::move(cap)) {}

  std::string_view name() const override { return inner_->name(); }
  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override { return inner_->next(cluster); }
  void on_start(const TaskSpec& task, TimePoint now) override { inner_->on_start(task, now); }
  void on_finish(const TaskSpec& task, TaskState outcome, Duration ran_for, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return inner_->size() + held_; }
  void begin_pass() override { inner_->begin_pass(); }
  bool pass_over(TaskId task) override { return inner_->pass_over(task); }

  // Tasks held back now (for tests and status).
  std::size_t held() const { return held_; }

 private:
  enum class Where : std::uint8_t { none, held, inner };
  struct Entry {
    Where where = Where::none;
    std::int64_t cores = 0;
    std::uint32_t user = 0;
  };
  struct User {
    std::optional<std::int64_t> cap;
    std::int64_t admitted = 0;  // cores of its tasks in the inner policy
    std::deque<TaskSpec> waiting;
  };

  std::uint32_t user_index(const std::string& name);
  void admit(const TaskSpec& task, User& u, TimePoint now);
  // Moves the user's held tasks into the inner policy while they fit.
  void release(User& u, TimePoint now);

  std::unique_ptr<QueuePolicy> inner_;
  CapOf cap_of_;
  std::vector<Entry> entries_;  // by TaskId
  std::vector<User> users_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  std::size_t held_ = 0;
  TimePoint last_now_{};
};

}  // namespace chorus
