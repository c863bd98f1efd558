// What a policy declares about its options and what its factory reads them from. A policy names
// its keys with their kinds (OptionSpec); the registry checks every value against its kind and
// every key against the policy's list before the factory runs, so a factory reads valid values
// (PolicyArgs) and checks only what its kind cannot say (a file that must exist, a name that
// must be one of its own), reporting through PolicyArgs::fail.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/policy_options.hpp"
#include "core/units.hpp"

namespace chorus {

enum class OptionKind : std::uint8_t {
  user_weights,  // a map of users to positive numbers: {alice: 2, bob: 1}
  duration,      // 0 or more: 1s, 500ms, 1h30m (a bare number is seconds)
  number,        // a finite number
  text,          // a scalar: a name, a path
  map,           // a map of further values; the policy reads and checks its entries itself
};

struct OptionSpec {
  std::string key;
  OptionKind kind = OptionKind::text;
};

// Past runtimes (job class, seconds), e.g. from the journal (history_samples() in
// queue/work_estimator.hpp).
using RuntimeSamples = std::vector<std::pair<std::string, double>>;

// What a policy may use that does not come from the scheduler section.
struct PolicyContext {
  // job -> w_j from the tasks' `job: {weight}`: facts about the work; a policy that weighs jobs
  // takes them, the others ignore them. Missing = 1.
  std::map<std::string, double> job_weights;
  // Past runtimes of this workflow's tasks, read only when a policy calls it (reading the journal
  // costs a query per earlier run). Empty function, or nullopt from it: no history here.
  std::function<std::optional<RuntimeSamples>()> history;
  // The run's data sources by SourceId (WorkflowGraph::sources' names), for a policy that
  // names them in its options (network-cost's topology). Empty: none declared.
  std::vector<std::string> source_names;
};

// The problems of `entry`'s value as an option of kind `kind` (none when it is one), located at
// the value (or at the user inside a map of weights).
void check_option_value(const OptionEntry& entry, OptionKind kind,
                        std::vector<OptionIssue>& issues);

// "'<key>' in 'scheduler'" for an option from a file, "'<key>'" for one from a flag (whose origin
// already names it).
std::string option_label(const OptionEntry& entry);

// Parsers for values check_option_value accepted (nullopt otherwise).
std::optional<std::map<std::string, double>> user_weights_of(const OptionValue& value);
std::optional<Duration> duration_of(const OptionValue& value);
std::optional<double> number_of(const OptionValue& value);

// What a factory builds a policy from: its own options (only keys it declared, each valid for
// its kind) and the context.
class PolicyArgs {
 public:
  // `policy` names it in messages: "queue policy 'uwfq'".
  PolicyArgs(std::string policy, const PolicyOptions& options, const PolicyContext& context,
             std::vector<OptionIssue>& issues)
      : policy_(std::move(policy)), options_(options), context_(context), issues_(issues) {}

  const std::string& policy() const { return policy_; }
  const PolicyOptions& options() const { return options_; }
  const PolicyContext& context() const { return context_; }
  const OptionEntry* find(std::string_view key) const { return options_.find(key); }

  // A declared option's value; nullopt when it was not given.
  std::optional<std::map<std::string, double>> user_weights(std::string_view key) const;
  std::optional<Duration> duration(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;
  std::optional<std::string> text(std::string_view key) const;
  // The context's history (asks for it: the journal is read now).
  std::optional<RuntimeSamples> history() const;

  // A value its kind allows but the policy does not ("'vip' of queue policy 'vip-first' must
  // name a user"): the registry then refuses the policy with every such problem, located.
  void fail(const OptionOrigin& at, std::string message) {
    issues_.push_back({at, std::move(message)});
  }

 private:
  std::string policy_;
  const PolicyOptions& options_;
  const PolicyContext& context_;
  std::vector<OptionIssue>& issues_;
};

}  // namespace chorus
