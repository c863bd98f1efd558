// Network namespaces made by a test (ip netns add), with a veth pair between two of them, and a
// thread that runs inside one. Names carry the test's prefix and pid so parallel tests and
// helpers never collide; everything is removed when the object dies (deleting a namespace
// deletes its veth end and qdiscs). Tests skip with a clear message where `available()` is
// false (not root, no `ip`, namespaces not allowed).
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace chorus::test {

// Runs a shell command quietly; true on exit status 0.
inline bool sh(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

// Two namespaces <prefix><pid>a and ...b joined by a veth pair, addresses 10.<x>.<y>.1/24 (a)
// and .2 (b), both ends up.
class NamespacePair {
 public:
  explicit NamespacePair(const std::string& prefix) {
    const int pid = static_cast<int>(::getpid());
    a_ = prefix + std::to_string(pid) + "a";
    b_ = prefix + std::to_string(pid) + "b";
    const std::string subnet =
        "10." + std::to_string(200 + pid % 50) + "." + std::to_string(pid / 50 % 250) + ".";
    addr_a_ = subnet + "1";
    addr_b_ = subnet + "2";
    const std::string va = "v" + std::to_string(pid) + "a", vb = "v" + std::to_string(pid) + "b";
    dev_a_ = va;
    dev_b_ = vb;
    ok_ =
        sh("ip netns add " + a_) && sh("ip netns add " + b_) &&
        sh("ip link add " + va + " netns " + a_ + " type veth peer name " + vb + " netns " + b_) &&
        sh("ip -n " + a_ + " addr add " + addr_a_ + "/24 dev " + va) &&
        sh("ip -n " + b_ + " addr add " + addr_b_ + "/24 dev " + vb) &&
        sh("ip -n " + a_ + " link set " + va + " up") &&
        sh("ip -n " + b_ + " link set " + vb + " up") && sh("ip -n " + a_ + " link set lo up") &&
        sh("ip -n " + b_ + " link set lo up");
  }
  ~NamespacePair() {
    sh("ip netns del " + a_);
    sh("ip netns del " + b_);
  }
  NamespacePair(const NamespacePair&) = delete;
  NamespacePair& operator=(const NamespacePair&) = delete;

  bool available() const { return ok_; }
  const std::string& a() const { return a_; }
  const std::string& b() const { return b_; }
  const std::string& addr_a() const { return addr_a_; }
  const std::string& addr_b() const { return addr_b_; }
  const std::string& dev_a() const { return dev_a_; }
  const std::string& dev_b() const { return dev_b_; }

 private:
  std::string a_, b_, addr_a_, addr_b_, dev_a_, dev_b_;
  bool ok_ = false;
};

// Moves the calling thread into the named namespace; false if it cannot.
inline bool enter_netns(const std::string& name) {
  const int fd = ::open(("/var/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::setns(fd, CLONE_NEWNET) == 0;
  ::close(fd);
  return ok;
}

// A thread that runs `body` inside the named namespace; joined when the object dies.
class NetnsThread {
 public:
  NetnsThread(const std::string& netns, std::function<void()> body)
      : thread_([netns, body = std::move(body)] {
          if (enter_netns(netns)) body();
        }) {}
  ~NetnsThread() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

}  // namespace chorus::test
