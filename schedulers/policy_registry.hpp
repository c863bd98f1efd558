// PolicyRegistry: policies by name, so workflows, the CLI and embedding applications choose them
// with a string. Built-in policies are added by register_builtin_policies(); an application adds
// its own with one add_queue/add_placement call.
//
// A policy's options come from the scheduler section (a workflow's `scheduler:`, or flags such
// as `chorus simulate --weights`): the policy declares its keys and their kinds (OptionSpec), the
// registry checks the values and refuses keys the policy does not take, with each problem located
// where it was written, and the factory builds from the valid values (PolicyArgs). What the policy
// may use from outside the section (job weights, the journal's past runtimes) comes as a
// PolicyContext. Nothing outside a policy's own files needs to know which options it takes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/policy.hpp"
#include "schedulers/policy_options.hpp"
#include "schedulers/quorum/quorum_policy.hpp"

namespace chorus {

// The policies a scheduler section leaves out.
inline constexpr const char* kDefaultQueuePolicy = "fifo";
inline constexpr const char* kDefaultPlacementPolicy = "first-fit";

// The queue and placement policies a scheduler section chose.
struct SchedulerPolicies {
  std::unique_ptr<QueuePolicy> queue;
  std::unique_ptr<PlacementPolicy> placement;
};

class PolicyRegistry {
 public:
  // A policy that takes no options.
  using QueueFactory = std::function<std::unique_ptr<QueuePolicy>()>;
  using PlacementFactory = std::function<std::unique_ptr<PlacementPolicy>()>;
  // A policy with options: `args` holds only keys of its OptionSpecs, each valid for its kind.
  // An error Status (a policy's own create() refusing them) is reported at the policy's name.
  using QueueBuilder = std::function<Result<std::unique_ptr<QueuePolicy>>(PolicyArgs& args)>;
  using PlacementBuilder =
      std::function<Result<std::unique_ptr<PlacementPolicy>>(PolicyArgs& args)>;
  using QuorumFactory = std::function<std::unique_ptr<QuorumPolicy>()>;
  using QuorumBuilder = std::function<Result<std::unique_ptr<QuorumPolicy>>(PolicyArgs& args)>;

  // A registry holding the built-in policies.
  static PolicyRegistry with_builtins();

  // Each replaces a policy of the same name (of its kind).
  void add_queue(std::string name, QueueFactory factory);
  void add_queue(std::string name, std::vector<OptionSpec> options, QueueBuilder builder);
  void add_placement(std::string name, PlacementFactory factory);
  void add_placement(std::string name, std::vector<OptionSpec> options, PlacementBuilder builder);
  void add_quorum(std::string name, QuorumFactory factory);
  void add_quorum(std::string name, std::vector<OptionSpec> options, QuorumBuilder builder);

  // One policy with its own options. Errors: not_found for an unknown name, listing the known
  // ones ("unknown queue policy 'fifoo' (did you mean 'fifo'?); known: fair, fifo, uwfq");
  // invalid_argument for options it does not take or bad values, one located problem per line
  // ("wf.yaml:3:10: queue policy 'fifo' takes no option 'weights' (fair, uwfq do); it takes
  // none").
  Result<std::unique_ptr<QueuePolicy>> make_queue(const std::string& name,
                                                  const PolicyOptions& options = {},
                                                  const PolicyContext& context = {}) const;
  Result<std::unique_ptr<PlacementPolicy>> make_placement(const std::string& name,
                                                          const PolicyOptions& options = {},
                                                          const PolicyContext& context = {}) const;

  // A quorum policy (schedulers/quorum/quorum_policy.hpp) with its options: a workflow's
  // `quorum: {policy: dbw, ...}` (`at` where the name was written, the options every key but
  // `policy` and `n`), the simulator's and the parameter server's flags. Errors as make_queue's,
  // located at `at` and at the options' own positions.
  Result<std::unique_ptr<QuorumPolicy>> make_quorum(const std::string& name,
                                                    const PolicyOptions& options = {},
                                                    const PolicyContext& context = {},
                                                    const OptionOrigin& at = {}) const;
  // The problems make_quorum would report, located (the workflow reader's check).
  std::vector<OptionIssue> check_quorum(const std::string& name, const OptionOrigin& at,
                                        const PolicyOptions& options) const;

  // The policies of a scheduler section (empty names: kDefaultQueuePolicy,
  // kDefaultPlacementPolicy), its options split between them: each key goes to the queue policy
  // if it takes it, else to the placement policy; a key neither takes is refused. Errors as
  // above, every problem of the section at once (invalid_argument; not_found when the only
  // problem is an unknown name).
  Result<SchedulerPolicies> make_policies(const SchedulerChoice& choice,
                                          const PolicyContext& context = {}) const;
  // The problems make_policies would report, located (the workflow reader's check).
  std::vector<OptionIssue> check(const SchedulerChoice& choice) const;

  // The entries of `options` that the queue policy `queue` or the placement policy `placement`
  // take (for options meant for several policies: `chorus simulate --compare ... --weights`).
  PolicyOptions options_taken(const std::string& queue, const std::string& placement,
                              const PolicyOptions& options) const;
  // The queue policies that take the option `key` ("weights": cfq, fair, ujf, uwfq).
  std::vector<std::string> queues_taking(const std::string& key) const;
  // A policy's options; empty for one without options or an unknown name.
  std::vector<OptionSpec> queue_options(const std::string& name) const;
  std::vector<OptionSpec> placement_options(const std::string& name) const;
  std::vector<OptionSpec> quorum_options(const std::string& name) const;

  std::vector<std::string> queue_names() const;
  std::vector<std::string> placement_names() const;
  std::vector<std::string> quorum_names() const;

  template <typename Policy>
  struct Entry {
    std::vector<OptionSpec> options;
    std::function<Result<std::unique_ptr<Policy>>(PolicyArgs&)> build;
  };

 private:
  std::map<std::string, Entry<QueuePolicy>> queues_;
  std::map<std::string, Entry<PlacementPolicy>> placements_;
  std::map<std::string, Entry<QuorumPolicy>> quorums_;
};

// The built-in policies: one line each in builtin_policies.cpp.
void register_builtin_policies(PolicyRegistry& registry);

}  // namespace chorus
