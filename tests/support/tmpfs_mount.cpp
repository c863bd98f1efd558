#include "support/tmpfs_mount.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace chorus::test {

TmpfsMount::TmpfsMount(std::string dir, const std::string& size) : dir_(std::move(dir)) {
  const std::string options = "size=" + size + ",mode=0755";
  mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
}

TmpfsMount::~TmpfsMount() {
  if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
}

bool TmpfsMount::make_read_only() {
  return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                 nullptr) == 0;
}

long long TmpfsMount::fill(const std::string& name) {
  const std::string path = dir_ + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  std::vector<char> block(4096, 'x');
  long long total = 0;
  for (;;) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n > 0) {
      total += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // ENOSPC: full
  }
  // Single bytes fill the last partial block too.
  while (::write(fd, block.data(), 1) == 1) ++total;
  ::close(fd);
  return total;
}

}  // namespace chorus::test
