// Helpers shared by the launcher tests: a poll loop like the coordinator's, temporary
// directories, and checks that processes are really gone.
#pragma once

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/units.hpp"

namespace chorus::test {

// Polls `launcher` the way the coordinator does (wait_fd, capped by next_deadline) until `want`
// updates arrived or `limit` passed; returns what arrived.
inline std::vector<StateUpdate> drive(Launcher& launcher, std::size_t want,
                                      Duration limit = std::chrono::seconds(30)) {
  std::vector<StateUpdate> got;
  TimePoint end = Clock::now() + limit;
  while (got.size() < want && Clock::now() < end) {
    int timeout_ms = 100;
    if (auto deadline = launcher.next_deadline()) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      timeout_ms = static_cast<int>(std::clamp<long long>(ms.count() + 1, 0, 100));
    }
    pollfd pfd{launcher.wait_fd(), POLLIN, 0};
    ::poll(&pfd, pfd.fd >= 0 ? 1 : 0, timeout_ms);
    launcher.poll(got);
  }
  return got;
}

// Whether the launcher's wait_fd() is readable right now.
inline bool wait_fd_ready(const Launcher& launcher) {
  pollfd pfd{launcher.wait_fd(), POLLIN, 0};
  return ::poll(&pfd, 1, 0) == 1;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "chorus-adapters-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<pid_t> read_pids(const std::string& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  long pid;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Orphaned grandchildren of the tasks are re-parented to this test process instead of to
// whatever runs as pid 1 here (which may never reap them), so the tests can reap and check them.
inline void become_subreaper() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

// Waits (bounded) until `pid` no longer exists, reaping it if it became our zombie. A process
// that survived its group's SIGKILL would still exist after the limit.
inline bool process_gone(pid_t pid, Duration limit = std::chrono::seconds(10)) {
  TimePoint end = Clock::now() + limit;
  for (;;) {
    ::waitpid(pid, nullptr, WNOHANG);
    if (::kill(pid, 0) == -1 && errno == ESRCH) return true;
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Waits (bounded) until `path` holds at least `count` whitespace-separated pids.
inline std::vector<pid_t> wait_for_pids(const std::string& path, std::size_t count,
                                        Duration limit = std::chrono::seconds(10)) {
  TimePoint end = Clock::now() + limit;
  std::vector<pid_t> pids = read_pids(path);
  while (pids.size() < count && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    pids = read_pids(path);
  }
  return pids;
}

}  // namespace chorus::test
