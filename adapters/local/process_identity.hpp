// Telling one process apart from a later one that reuses its pid: the start time the kernel
// keeps in /proc/<pid>/stat (clock ticks since boot) and the boot id. A (boot id, pid, start time)
// triple names one process for the whole life of the host; a pid alone names whoever has it now.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace chorus {

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. nullopt when
// there is no such process (or it is a zombie: it no longer runs anything). One open and read.
std::optional<std::uint64_t> process_start_ticks(pid_t pid);

// /proc/sys/kernel/random/boot_id without its newline; empty when unreadable. Read once per
// process and cached (it cannot change while we run).
const std::string& boot_id();

}  // namespace chorus
