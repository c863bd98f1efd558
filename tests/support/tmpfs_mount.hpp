// A small tmpfs mounted for one test (needs root, as CI runs): a real file system that can be
// filled or made read-only, which a chmod cannot simulate for root.
#pragma once

#include <string>

namespace chorus::test {

class TmpfsMount {
 public:
  // Mounts a tmpfs of `size` (mount(8)'s size= syntax, e.g. "1m") on `dir` (an existing empty
  // folder). ok() says whether it worked (not root, no mount permission: the test should skip).
  TmpfsMount(std::string dir, const std::string& size);
  // Unmounts (lazily, so a process still inside cannot keep it mounted), whatever the test did.
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool ok() const { return mounted_; }
  const std::string& path() const { return dir_; }
  // Remounts it read-only; false (with errno) when the kernel refuses.
  bool make_read_only();
  // Writes a file until the file system is full; returns the bytes written.
  long long fill(const std::string& name);

 private:
  std::string dir_;
  bool mounted_ = false;
};

}  // namespace chorus::test
