#include "core/thread_guard.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

namespace chorus {

void exit_on_thread_exception(const char* thread_name, std::exception_ptr error) {
  // Fixed-size text only: after a bad_alloc, formatting must not allocate.
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "chorus: out of memory in the %s thread; exiting\n", thread_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus: internal error in the %s thread: %s (please report it)\n",
                 thread_name, e.what());
  } catch (...) {
    std::fprintf(stderr,
                 "chorus: internal error in the %s thread: an exception of unknown type (please "
                 "report it)\n",
                 thread_name);
  }
  // Not exit(): the other threads are still running, and static destructors would race them.
  std::fflush(stderr);
  std::_Exit(kExitThreadException);
}

}  // namespace chorus
