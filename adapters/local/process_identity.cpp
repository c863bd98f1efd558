#include "adapters/local/process_identity.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace chorus {

std::optional<std::uint64_t> process_start_ticks(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and ')' (at most 64 bytes in all), so the
  // fields are counted from the last ')'. 512 bytes reach field 22 with room to spare.
  char buf[512];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return std::nullopt;
  ++p;
  // Field 3 (state) follows the ')'; field 22 is 19 fields further.
  int field = 2;
  std::uint64_t value = 0;
  while (*p != '\0') {
    while (*p == ' ') ++p;
    if (*p == '\0') break;
    ++field;
    if (field == 3 && (*p == 'Z' || *p == 'X')) return std::nullopt;
    if (field == 22) {
      if (*p < '0' || *p > '9') return std::nullopt;
      for (; *p >= '0' && *p <= '9'; ++p) value = value * 10 + static_cast<std::uint64_t>(*p - '0');
      return value;
    }
    while (*p != ' ' && *p != '\0') ++p;
  }
  return std::nullopt;
}

const std::string& boot_id() {
  static const std::string id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string line;
    std::getline(in, line);
    return line;
  }();
  return id;
}

}  // namespace chorus
