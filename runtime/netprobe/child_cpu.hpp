// ChildCpu: CPU seconds per second burned by the agent's tasks — what a node's cores actually
// do, as opposed to what was asked (a task that uses less or more than its cores shows here).
//
// A task runs as a process group (adapters/local: pgid = the leader's pid, killed as a group
// when the leader ends). Its CPU so far = for each live process of the group, utime + stime +
// cutime + cstime from /proc/<pid>/stat (cutime/cstime hold the children it already reaped).
// What ended is in the agent's own RUSAGE_CHILDREN (the leaders it reaped, with what they had
// reaped). The sum of both is monotone except for descendants that left the group or were never
// waited for; the rate is its increase over the sampling interval, never negative.
//
// RUSAGE_CHILDREN is per process: in `chorus agent` the only children are tasks; an agent on a
// thread of a larger process (tests) also counts that process's other children.
//
// Threading: one object per sampling thread; the process groups are handed in per sample.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/status.hpp"

namespace chorus::netprobe {

struct ProcStat {
  int pid = 0;
  int ppid = 0;
  int pgid = 0;
  std::uint64_t cpu_ticks = 0;  // utime + stime + cutime + cstime
};

// Parses one /proc/<pid>/stat line (the command may contain spaces and parentheses: fields
// are counted after the last ')'). False on a malformed line.
bool parse_proc_stat(std::string_view line, ProcStat& out);

// CPU seconds so far of every live process whose process group is in `pgids` (one scan of
// /proc).
double group_cpu_seconds(std::span<const int> pgids);

// CPU seconds of this process's reaped children (getrusage RUSAGE_CHILDREN).
double reaped_children_cpu_seconds();

class ChildCpu {
 public:
  // `pgids` are the running tasks' process groups; `t` seconds on a steady clock. The first
  // sample returns NaN.
  double sample(std::span<const int> pgids, double t);

 private:
  double last_total_ = 0;
  double last_t_ = 0;
  bool have_last_ = false;
};

}  // namespace chorus::netprobe
