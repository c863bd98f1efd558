#include "adapters/local/thread_fs_identity.hpp"

#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace chorus {

std::vector<gid_t> ThreadFsIdentity::groups_of(const std::string& name, gid_t gid) {
  int n = 32;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  while (!name.empty()) {
    int count = n;
    if (getgrouplist(name.c_str(), gid, groups.data(), &count) >= 0) {
      groups.resize(static_cast<std::size_t>(count));
      return groups;
    }
    if (count <= n || count > 65536) break;
    n = count;
    groups.resize(static_cast<std::size_t>(n));
  }
  return {gid};
}

ThreadFsIdentity::ThreadFsIdentity(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  if (::geteuid() != 0 || uid == 0) return;
  const int n = static_cast<int>(::syscall(SYS_getgroups, 0, nullptr));
  if (n >= 0) {
    saved_groups_.resize(static_cast<std::size_t>(n));
    if (::syscall(SYS_getgroups, n, saved_groups_.data()) != n) saved_groups_.clear();
  }
  // Groups and gid first: once the fs uid is not 0, the thread may no longer change them.
  ok_ = ::syscall(SYS_setgroups, groups.size(), groups.data()) == 0;
  if (ok_) {
    ::syscall(SYS_setfsgid, gid);
    ::syscall(SYS_setfsuid, uid);
    // setfs*id return the previous id whatever happens: read the new ones back.
    ok_ = static_cast<gid_t>(::syscall(SYS_setfsgid, -1)) == gid &&
          static_cast<uid_t>(::syscall(SYS_setfsuid, -1)) == uid;
  }
  switched_ = true;
}

ThreadFsIdentity::~ThreadFsIdentity() {
  if (!switched_) return;
  ::syscall(SYS_setfsuid, 0);
  ::syscall(SYS_setfsgid, 0);
  ::syscall(SYS_setgroups, saved_groups_.size(), saved_groups_.data());
}

}  // namespace chorus
