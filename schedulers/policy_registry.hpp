// PolicyRegistry: policies by name, so workflows, the CLI and embedding applications choose them
// with a string. Built-in policies are added by register_builtin_policies(); an application adds
// its own with one add_queue/add_placement call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

// What a queue policy may be configured with: a workflow's `scheduler:` section, CLI options.
struct QueueConfig {
  std::map<std::string, double> weights;  // user -> share weight (fair-share policies)
  std::optional<Duration> grace;          // how long a user who ran out of work keeps its place
  // job -> w_j, a job's share of its user's share (uwfq; cfq takes them as its flows' weights)
  std::map<std::string, double> job_weights;
  // Past runtimes (job class, seconds), e.g. from the journal (history_samples() in
  // queue/work_estimator.hpp). When set, cfq and uwfq estimate a job's work R_j by HistoryWork
  // seeded with them (the mean of past runs of its class; declared estimates for classes never
  // seen; it also learns from this run's finished attempts). nullopt: declared estimates.
  std::optional<std::vector<std::pair<std::string, double>>> history;
  bool empty() const { return weights.empty() && !grace && job_weights.empty() && !history; }
};

class PolicyRegistry {
 public:
  using QueueFactory = std::function<std::unique_ptr<QueuePolicy>()>;
  // For policies that take a QueueConfig; errors (a bad weight) come back as Status.
  using ConfigurableQueueFactory =
      std::function<Result<std::unique_ptr<QueuePolicy>>(const QueueConfig&)>;
  using PlacementFactory = std::function<std::unique_ptr<PlacementPolicy>()>;

  // A registry holding the built-in policies.
  static PolicyRegistry with_builtins();

  // Replaces a policy of the same name. A policy added with a plain factory takes no
  // configuration: make_queue refuses weights for it rather than ignoring them.
  void add_queue(std::string name, QueueFactory factory);
  void add_queue(std::string name, ConfigurableQueueFactory factory);
  void add_placement(std::string name, PlacementFactory factory);

  // Errors: not_found, listing the known names ("unknown queue policy 'fifoo' (did you mean
  // 'fifo'?); known: fair, fifo, uwfq").
  // With a config: invalid_argument when the policy takes none ("queue policy 'fifo' takes no
  // weights") or the config is bad (the policy's message).
  Result<std::unique_ptr<QueuePolicy>> make_queue(const std::string& name,
                                                  const QueueConfig& config = {}) const;
  Result<std::unique_ptr<PlacementPolicy>> make_placement(const std::string& name) const;

  std::vector<std::string> queue_names() const;
  std::vector<std::string> placement_names() const;

 private:
  std::map<std::string, ConfigurableQueueFactory> queues_;
  std::map<std::string, PlacementFactory> placements_;
};

// The built-in policies: one line each in builtin_policies.cpp.
void register_builtin_policies(PolicyRegistry& registry);

}  // namespace chorus
