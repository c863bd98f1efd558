#include "schedulers/queue/user_cap_queue.hpp"

#include <algorithm>

namespace chorus {

std::uint32_t UserCapQueue::user_index(const std::string& name) {
  auto [it, fresh] = user_ids_.emplace(name, static_cast<std::uint32_t>(users_.size()));
  if (fresh) users_.push_back(User{cap_of_(name), 0, {}});
  return it->second;
}

void UserCapQueue::on_ready(const TaskSpec& task, TimePoint now) {
  last_now_ = now;
  if (entries_.size() <= task.id) entries_.resize(task.id + 1);
  Entry& e = entries_[task.id];
  e.user = user_index(task.user);
  e.cores = task.total().cores;
  User& u = users_[e.user];
  // Alone, a task goes in even past the cap: nothing of its user's runs to wait for.
  const bool fits = !u.cap || u.admitted == 0 || u.admitted + e.cores <= *u.cap;
  if (fits && u.waiting.empty()) {
    admit(task, u, now);
    return;
  }
  e.where = Where::held;
  ++held_;
  u.waiting.push_back(task);
}

void UserCapQueue::admit(const TaskSpec& task, User& u, TimePoint now) {
  Entry& e = entries_[task.id];
  e.where = Where::inner;
  u.admitted += e.cores;
  inner_->on_ready(task, now);
}

void UserCapQueue::release(User& u, TimePoint now) {
  while (!u.waiting.empty()) {
    const TaskSpec& t = u.waiting.front();
    const Entry& e = entries_[t.id];
    if (u.admitted != 0 && u.cap && u.admitted + e.cores > *u.cap) return;
    --held_;
    admit(t, u, now);
    u.waiting.pop_front();
  }
}

void UserCapQueue::on_finish(const TaskSpec& task, TaskState outcome, Duration ran_for,
                             TimePoint now) {
  last_now_ = now;
  inner_->on_finish(task, outcome, ran_for, now);
  if (task.id >= entries_.size()) return;
  Entry& e = entries_[task.id];
  if (e.where != Where::inner) return;
  e.where = Where::none;
  User& u = users_[e.user];
  u.admitted -= e.cores;
  release(u, now);
}

void UserCapQueue::remove(TaskId task) {
  if (task >= entries_.size()) {
    inner_->remove(task);
    return;
  }
  Entry& e = entries_[task];
  if (e.where == Where::held) {
    // Erased now, not skipped later: the same task may be ready again (a retry) before then.
    e.where = Where::none;
    --held_;
    User& u = users_[e.user];
    std::erase_if(u.waiting, [task](const TaskSpec& t) { return t.id == task; });
    release(u, last_now_);  // the front may fit now
    return;
  }
  inner_->remove(task);
  if (e.where == Where::inner) {
    e.where = Where::none;
    User& u = users_[e.user];
    u.admitted -= e.cores;
    release(u, last_now_);  // no clock here: the last one seen
  }
}

}  // namespace chorus
