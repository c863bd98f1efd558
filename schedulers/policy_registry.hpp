// PolicyRegistry: policies by name, so workflows, the CLI and embedding applications choose them
// with a string. Built-in policies are added by register_builtin_policies(); an application adds
// its own with one add_queue/add_placement call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "schedulers/policy.hpp"

namespace chorus {

class PolicyRegistry {
 public:
  using QueueFactory = std::function<std::unique_ptr<QueuePolicy>()>;
  using PlacementFactory = std::function<std::unique_ptr<PlacementPolicy>()>;

  // A registry holding the built-in policies.
  static PolicyRegistry with_builtins();

  // Replaces a policy of the same name.
  void add_queue(std::string name, QueueFactory factory);
  void add_placement(std::string name, PlacementFactory factory);

  // Errors: not_found, listing the known names ("unknown queue policy 'fifoo' (did you mean
  // 'fifo'?); known: fair, fifo, uwfq").
  Result<std::unique_ptr<QueuePolicy>> make_queue(const std::string& name) const;
  Result<std::unique_ptr<PlacementPolicy>> make_placement(const std::string& name) const;

  std::vector<std::string> queue_names() const;
  std::vector<std::string> placement_names() const;

 private:
  std::map<std::string, QueueFactory> queues_;
  std::map<std::string, PlacementFactory> placements_;
};

// The built-in policies: one line each in builtin_policies.cpp.
void register_builtin_policies(PolicyRegistry& registry);

}  // namespace chorus
