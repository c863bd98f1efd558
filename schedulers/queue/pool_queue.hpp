// PoolQueue: the engine behind fair (Spark's FAIR scheduler) and ujf. One pool per user; the
// next task comes from the pool that is furthest below its share, then from a job inside it.
//
// Pool order (Spark's FairSchedulingAlgorithm, over cores of running tasks): pools below their
// minShare ("needy") first, by running / minShare; then by running / weight; ties by the pool
// seen first. Inside a pool, jobs are either FIFO (in the order they were first seen) or fair
// (fewest running cores first, ties FIFO). Tasks of one job run in the order they became ready.
// A task without a job is a job of its own.
//
// Every operation is O(log n) in pools and queued jobs.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/queue/passed_tasks.hpp"
#include "schedulers/queue/task_fifo.hpp"

namespace chorus {

struct PoolOptions {
  std::map<std::string, double> weights;  // by user; missing = 1
  std::map<std::string, int> min_shares;  // by user, in cores; missing = 0

  // Errors: invalid_argument for a weight that is not a positive finite number or a negative
  // minShare, naming the user.
  Status validate() const;
};

// The options fair and ujf take from a scheduler section: `weights` (users' pools' weights).
std::vector<OptionSpec> pool_option_specs();
PoolOptions pool_options(const PolicyArgs& args);

enum class WithinPool : std::uint8_t { fifo, fair };

class PoolQueue : public QueuePolicy {
 public:
  // `options` must be valid (PoolOptions::validate()).
  PoolQueue(WithinPool within, PoolOptions options);

  void on_ready(const TaskSpec& task, TimePoint now) override;
  std::optional<TaskId> next(const ClusterView& cluster) override;
  void on_start(const TaskSpec& task, TimePoint now) override;
  void on_finish(const TaskSpec& task, TaskState outcome, Duration ran_for, TimePoint now) override;
  void remove(TaskId task) override;
  std::size_t size() const override { return size_; }
  // A passed-over task (policy.hpp) sets its pool aside for the pass: the next pool in order.
  void begin_pass() override { passed_.clear(); }
  bool pass_over(TaskId task) override { return passed_.add(task); }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  using Key = std::tuple<int, double, std::uint64_t, std::uint32_t>;

  struct Job {
    std::uint32_t pool = kNone;
    std::uint64_t seq = 0;
    long running = 0;         // cores
    std::size_t live = 0;     // queued tasks not removed
    std::size_t started = 0;  // tasks running
    TaskFifo queued;
    bool in_set = false;
    Key key{};
    std::string name;  // empty for one-task jobs
  };
  struct Pool {
    double weight = 1;
    int min_share = 0;
    long running = 0;  // cores
    std::uint64_t seq = 0;
    std::set<Key> jobs;  // jobs with queued tasks
    bool in_set = false;
    Key key{};
  };

  Key pool_key(std::uint32_t pool) const;
  Key job_key(std::uint32_t job) const;
  void refresh_pool(std::uint32_t pool);
  void refresh_job(std::uint32_t job);
  std::uint32_t pool_for(const std::string& user);
  std::uint32_t job_for(const TaskSpec& task, std::uint32_t pool);
  void release_job_if_idle(std::uint32_t job);
  // Pops the job's started or removed tasks off its front; whether a queued one is left.
  bool drop_stale_front(std::uint32_t job);
  void ensure_task(TaskId task);

  WithinPool within_;
  PoolOptions options_;
  std::vector<Pool> pools_;
  std::unordered_map<std::string, std::uint32_t> pool_by_user_;
  std::set<Key> ready_pools_;
  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_jobs_;
  std::unordered_map<std::string, std::uint32_t> job_by_name_;
  std::uint64_t next_seq_ = 0;
  std::vector<std::uint32_t> job_of_task_;  // by task id: queued or running
  std::vector<std::uint8_t> queued_;        // by task id
  std::size_t size_ = 0;
  PassedTasks passed_;  // passed over in this dispatch pass
};

}  // namespace chorus
