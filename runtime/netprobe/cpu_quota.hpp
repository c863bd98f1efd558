// The cores a process's CPU quota allows: cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us (the
// test bed's slow nodes), or cgroup v2 cpu.max, of the cgroup /proc/<pid>/cgroup names for the
// cpu controller — and of each cgroup above it, the tightest winning (a parent's quota binds
// its children). No quota anywhere (-1, "max") = NaN.
//
// Read once per sample: a quota may be changed while the agent runs.
#pragma once

#include <string>
#include <string_view>

namespace chorus::netprobe {

// The cpu controller's path in /proc/<pid>/cgroup text ("4:cpu,cpuacct:/a/b" -> "/a/b"; for
// v2, "0::/a/b"); `v2` says which was found. Empty when neither.
std::string cpu_cgroup_path(std::string_view proc_cgroup, bool& v2);

// Where the cgroup file system with the cpu controller (v1) or cgroup2 (v2) is mounted, from
// /proc/self/mountinfo text; empty when not mounted.
std::string cgroup_mount(std::string_view mountinfo, bool v2);

// The quota in cores of `pid` (0 = this process); NaN = none, or unreadable.
double cpu_quota_cores(int pid = 0);

}  // namespace chorus::netprobe
