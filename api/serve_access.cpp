#include "api/serve_access.hpp"

#include <grp.h>
#include <pwd.h>

#include <algorithm>

namespace chorus {
namespace {

// Keeps the larger of two set limits (an unset one gives nothing).
void larger(std::optional<std::int64_t>& into, OptionOrigin& into_at,
            const std::optional<std::int64_t>& other, const OptionOrigin& other_at) {
  if (other && (!into || *other > *into)) {
    into = other;
    into_at = other_at;
  }
}

}  // namespace

std::vector<std::string> groups_of(const std::string& name, std::uint32_t gid) {
  int count = 64;
  std::vector<gid_t> gids(static_cast<std::size_t>(count));
  if (getgrouplist(name.c_str(), gid, gids.data(), &count) < 0) {
    gids.resize(static_cast<std::size_t>(count));
    if (getgrouplist(name.c_str(), gid, gids.data(), &count) < 0) count = 0;
  }
  gids.resize(static_cast<std::size_t>(std::max(count, 0)));
  std::vector<std::string> names;
  std::vector<char> buf(16384);
  for (gid_t g : gids) {
    group gr{};
    group* found = nullptr;
    if (getgrgid_r(g, &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
      names.emplace_back(gr.gr_name);
    }
  }
  return names;
}

bool ServeAccess::is_admin(std::uint32_t uid, const std::string& name, std::uint32_t gid) const {
  if (uid == 0) return true;
  const auto& users = config_.admin_users;
  if (std::find(users.begin(), users.end(), name) != users.end()) return true;
  if (config_.admin_groups.empty()) return false;
  for (const std::string& g : groups_of(name, gid)) {
    const auto& groups = config_.admin_groups;
    if (std::find(groups.begin(), groups.end(), g) != groups.end()) return true;
  }
  return false;
}

ServeLimits ServeAccess::limits_of(const std::string& name, std::uint32_t gid) const {
  // Per limit: the user's own entry, else the largest its groups' entries set, else the default.
  ServeLimits l;
  if (auto own = config_.user_limits.find(name); own != config_.user_limits.end()) l = own->second;
  ServeLimits from_groups;
  if (!config_.group_limits.empty() && (!l.queued_tasks || !l.running_cores)) {
    for (const std::string& g : groups_of(name, gid)) {
      auto it = config_.group_limits.find(g);
      if (it == config_.group_limits.end()) continue;
      larger(from_groups.queued_tasks, from_groups.queued_tasks_at, it->second.queued_tasks,
             it->second.queued_tasks_at);
      larger(from_groups.running_cores, from_groups.running_cores_at, it->second.running_cores,
             it->second.running_cores_at);
    }
  }
  const ServeLimits& d = config_.default_limits;
  for (const ServeLimits* source : {static_cast<const ServeLimits*>(&from_groups), &d}) {
    if (!l.queued_tasks)
      l.queued_tasks = source->queued_tasks, l.queued_tasks_at = source->queued_tasks_at;
    if (!l.running_cores) {
      l.running_cores = source->running_cores, l.running_cores_at = source->running_cores_at;
    }
  }
  return l;
}

std::map<std::string, double> ServeAccess::user_weights() const {
  std::map<std::string, double> out;
  if (!config_.group_weights.empty()) {
    auto give = [&](const std::string& user, double w) {
      auto [it, fresh] = out.emplace(user, w);
      if (!fresh) it->second = std::max(it->second, w);
    };
    std::vector<char> buf(65536);
    for (const auto& [name, w] : config_.group_weights) {
      group gr{};
      group* found = nullptr;
      if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
        continue;
      }
      for (char** m = gr.gr_mem; *m != nullptr; ++m) give(*m, w);
      const gid_t gid = gr.gr_gid;
      // Users whose primary group it is are not listed as its members.
      setpwent();
      while (passwd* pw = getpwent()) {
        if (pw->pw_gid == gid) give(pw->pw_name, w);
      }
      endpwent();
    }
  }
  for (const auto& [name, w] : config_.user_weights) out[name] = w;
  return out;
}

}  // namespace chorus
