// run_guarded (core/thread_guard): an exception escaping a thread of ours is a message and exit
// status 3, not std::terminate's abort. Each case runs in a forked child, since it ends it.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/thread_guard.hpp"

namespace {

struct Ended {
  int status = -1;
  std::string err;
};

// Forks; the child runs `body` on a thread under run_guarded, stderr into a pipe.
template <typename Body>
Ended run_in_child(Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    std::thread t([&] { chorus::run_guarded("test worker", body); });
    t.join();
    ::_exit(0);
  }
  ::close(fds[1]);
  Ended e;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) e.err.append(buf, n);
  ::close(fds[0]);
  ::waitpid(pid, &e.status, 0);
  return e;
}

}  // namespace

TEST_CASE("Core.ThreadGuard.BadAllocInAThreadExits3WithAMessage") {
  Ended e = run_in_child([] { throw std::bad_alloc(); });
  REQUIRE(WIFEXITED(e.status));  // not WIFSIGNALED with SIGABRT
  CHECK(WEXITSTATUS(e.status) == chorus::kExitThreadException);
  CHECK(e.err == "chorus: out of memory in the test worker thread; exiting\n");
}

TEST_CASE("Core.ThreadGuard.AnyExceptionInAThreadExits3NamingIt") {
  Ended e = run_in_child([] { throw std::runtime_error("broken invariant"); });
  REQUIRE(WIFEXITED(e.status));
  CHECK(WEXITSTATUS(e.status) == 3);
  CHECK(e.err.find("internal error in the test worker thread: broken invariant") !=
        std::string::npos);
  Ended odd = run_in_child([] { throw 42; });
  REQUIRE(WIFEXITED(odd.status));
  CHECK(WEXITSTATUS(odd.status) == 3);
  CHECK(odd.err.find("an exception of unknown type") != std::string::npos);
}

TEST_CASE("Core.ThreadGuard.ABodyThatReturnsEndsNormally") {
  Ended e = run_in_child([] {});
  REQUIRE(WIFEXITED(e.status));
  CHECK(WEXITSTATUS(e.status) == 0);
  CHECK(e.err.empty());
}
