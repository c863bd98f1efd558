#include "runtime/netprobe/cpu_quota.hpp"

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>

namespace chorus::netprobe {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool to_long(std::string_view s, long long& out) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

bool has_controller(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// Quota cores of one cgroup folder; NaN = none.
double folder_quota(const std::string& dir, bool v2) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (v2) {
    const std::string max = read_text(dir + "/cpu.max");  // "max 100000" or "50000 100000"
    const auto sp = max.find(' ');
    long long quota = 0, period = 0;
    if (sp == std::string::npos || !to_long(std::string_view(max).substr(0, sp), quota) ||
        !to_long(std::string_view(max).substr(sp + 1), period) || quota <= 0 || period <= 0) {
      return nan;
    }
    return static_cast<double>(quota) / static_cast<double>(period);
  }
  long long quota = 0, period = 0;
  if (!to_long(read_text(dir + "/cpu.cfs_quota_us"), quota) ||
      !to_long(read_text(dir + "/cpu.cfs_period_us"), period) || quota <= 0 || period <= 0) {
    return nan;
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

}  // namespace

std::string cpu_cgroup_path(std::string_view text, bool& v2) {
  std::string unified;
  bool have_unified = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string_view path = line.substr(c2 + 1);
    if (has_controller(controllers, "cpu")) {
      v2 = false;
      return std::string(path);
    }
    if (controllers.empty() && line.substr(0, c1) == "0") {
      unified = path;
      have_unified = true;
    }
  }
  v2 = have_unified;
  return unified;
}

std::string cgroup_mount(std::string_view text, bool v2) {
  // mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source super
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::string_view tail = line.substr(dash + 3);
    const auto sp1 = tail.find(' ');
    const std::string_view fstype = tail.substr(0, sp1);
    const auto sp2 = sp1 == std::string_view::npos ? sp1 : tail.rfind(' ');
    const std::string_view super = sp2 == std::string_view::npos ? "" : tail.substr(sp2 + 1);
    // The mount point is field 5.
    std::string_view head = line.substr(0, dash);
    std::string_view mount;
    for (int field = 1; field <= 5 && !head.empty(); ++field) {
      const auto sp = head.find(' ');
      if (field == 5) mount = head.substr(0, sp);
      head = sp == std::string_view::npos ? std::string_view{} : head.substr(sp + 1);
    }
    if (mount.empty()) continue;
    if (v2 ? fstype == "cgroup2" : fstype == "cgroup" && has_controller(super, "cpu")) {
      return std::string(mount);
    }
  }
  return {};
}

double cpu_quota_cores(int pid) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const std::string self = pid > 0 ? "/proc/" + std::to_string(pid) : "/proc/self";
  bool v2 = false;
  std::string path = cpu_cgroup_path(read_text(self + "/cgroup"), v2);
  if (path.empty()) return nan;
  const std::string mount = cgroup_mount(read_text("/proc/self/mountinfo"), v2);
  if (mount.empty()) return nan;
  double best = nan;
  for (;;) {
    const double q = folder_quota(mount + (path == "/" ? "" : path), v2);
    if (q == q && !(best <= q)) best = q;  // the tightest quota on the way up
    if (path.empty() || path == "/") break;
    const auto slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return best;
}

}  // namespace chorus::netprobe
