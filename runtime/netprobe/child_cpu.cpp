#include "runtime/netprobe/child_cpu.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace chorus::netprobe {
namespace {

double ticks_per_second() {
  static const double hz = [] {
    const long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();
  return hz;
}

bool next_field(std::string_view& s, std::string_view& field) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto sp = s.find(' ');
  field = s.substr(0, sp);
  s = sp == std::string_view::npos ? std::string_view{} : s.substr(sp);
  return true;
}

template <typename T>
bool to_number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

bool parse_proc_stat(std::string_view line, ProcStat& out) {
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return false;
  }
  if (!to_number(line.substr(0, open == 0 ? 0 : open - 1), out.pid)) return false;
  std::string_view rest = line.substr(close + 1);
  // Fields from 3 on: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime ...
  std::string_view f;
  std::uint64_t times[4] = {};
  for (int field = 3; field <= 17; ++field) {
    if (!next_field(rest, f)) return false;
    if (field == 4 && !to_number(f, out.ppid)) return false;
    if (field == 5 && !to_number(f, out.pgid)) return false;
    if (field >= 14) {
      // cutime and cstime are signed in the kernel's format; never negative in practice.
      long long v = 0;
      if (!to_number(f, v)) return false;
      times[field - 14] = v > 0 ? static_cast<std::uint64_t>(v) : 0;
    }
  }
  out.cpu_ticks = times[0] + times[1] + times[2] + times[3];
  return true;
}

double group_cpu_seconds(std::span<const int> pgids) {
  if (pgids.empty()) return 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  std::uint64_t ticks = 0;
  char path[300];
  char buf[1024];
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // it ended meanwhile
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    ProcStat st;
    if (!parse_proc_stat(std::string_view(buf, static_cast<std::size_t>(n)), st)) continue;
    if (std::find(pgids.begin(), pgids.end(), st.pgid) != pgids.end()) ticks += st.cpu_ticks;
  }
  ::closedir(proc);
  return static_cast<double>(ticks) / ticks_per_second();
}

double reaped_children_cpu_seconds() {
  rusage ru{};
  if (::getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
  const auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

double ChildCpu::sample(std::span<const int> pgids, double t) {
  const double total = group_cpu_seconds(pgids) + reaped_children_cpu_seconds();
  double rate = std::numeric_limits<double>::quiet_NaN();
  if (have_last_ && t > last_t_) rate = std::max(0.0, total - last_total_) / (t - last_t_);
  // A dip (a descendant that left its group) must not make the next interval count it again.
  last_total_ = have_last_ ? std::max(total, last_total_) : total;
  last_t_ = t;
  have_last_ = true;
  return rate;
}

}  // namespace chorus::netprobe
