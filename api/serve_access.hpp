// What a served instance's config (workflows/serve_config.hpp) means for one user: whether they
// administer the instance, their limits and their share. Groups are the user's groups in the
// system's databases (getgrouplist), read when asked, except for weights: the queue policy takes
// its weights by user name when the instance starts, so a group's weight reaches the users in
// that group then (its members and the users whose primary group it is).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workflows/serve_config.hpp"

namespace chorus {

class ServeAccess {
 public:
  ServeAccess() = default;
  explicit ServeAccess(ServeConfig config) : config_(std::move(config)) {}

  const ServeConfig& config() const { return config_; }
  // Root, a listed admin user, or a member of a listed admin group.
  bool is_admin(std::uint32_t uid, const std::string& name, std::uint32_t gid) const;
  // Each limit from the user's entry, else the most generous of its groups', else the default.
  ServeLimits limits_of(const std::string& name, std::uint32_t gid) const;
  // Users' weights for the queue policy: the listed users', then each listed group's members'
  // (the largest group weight when a user is in several; a user's own entry wins).
  std::map<std::string, double> user_weights() const;

 private:
  ServeConfig config_;
};

// The names of the groups `name` (primary group `gid`) belongs to.
std::vector<std::string> groups_of(const std::string& name, std::uint32_t gid);

}  // namespace chorus
