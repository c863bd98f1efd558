// ThreadFsIdentity: while alive, the calling thread reaches files as another user (its
// file-system uid, gid and supplementary groups), and only this thread: Linux keeps credentials
// per thread, and raw syscalls change this one's (glibc's setgroups() would change every
// thread's). Leaving the root uid for the file system drops the thread's file capabilities
// (CAP_DAC_OVERRIDE and the like), so the kernel checks that user's permissions, symlinks
// included; the destructor restores root's.
//
// For a served instance run as root: what it does in a user's folders on that user's behalf (a
// quorum round's record, an `until:` file) is done as that user, never as root.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace chorus {

class ThreadFsIdentity {
 public:
  // No change when this process is not root or `uid` is 0. `groups`: the user's supplementary
  // groups (groups_of(), looked up once per user: this runs on the coordinator's loop).
  ThreadFsIdentity(uid_t uid, gid_t gid, const std::vector<gid_t>& groups);
  ~ThreadFsIdentity();
  ThreadFsIdentity(const ThreadFsIdentity&) = delete;
  ThreadFsIdentity& operator=(const ThreadFsIdentity&) = delete;

  // Whether the thread now reaches files as that user (false: it could not switch; do nothing
  // on the user's behalf).
  bool ok() const { return ok_; }

  // The user's groups as getgrouplist() gives them (with `gid`; `gid` alone when the name is
  // unknown).
  static std::vector<gid_t> groups_of(const std::string& name, gid_t gid);

 private:
  bool switched_ = false;
  bool ok_ = true;
  std::vector<gid_t> saved_groups_;
};

}  // namespace chorus
