// run_guarded: the body of every thread Chorus starts (inproc workers, the ZAP handler).
//
// An exception escaping a thread's function calls std::terminate: an abort with a core dump and
// libstdc++'s terse "terminate called after throwing ...". Nothing of ours throws on purpose in
// these threads (expected failures travel as Status); what can is std::bad_alloc. run_guarded
// turns that into a message naming the thread on stderr and exit status 3, the CLI's "internal or
// I/O error" (cli/README.md). Every transition journaled so far stays journaled: `--resume`
// continues the run.
#pragma once

#include <exception>

namespace chorus {

// Exit status of a process whose thread let an exception escape (the CLI's kExitError).
inline constexpr int kExitThreadException = 3;

[[noreturn]] void exit_on_thread_exception(const char* thread_name, std::exception_ptr error);

template <typename Body>
void run_guarded(const char* thread_name, Body&& body) noexcept {
  try {
    body();
  } catch (...) {
    exit_on_thread_exception(thread_name, std::current_exception());
  }
}

}  // namespace chorus
