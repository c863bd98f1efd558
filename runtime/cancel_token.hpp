// CancelToken: a way to ask a running coordinator to stop, from any thread or a signal handler.
#pragma once

#include <atomic>

namespace chorus {

class CancelToken {
 public:
  CancelToken();
  ~CancelToken();
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  // Async-signal-safe and thread-safe. Each call counts: the coordinator cancels gracefully on the
  // first request and kills at once on the second (a second Ctrl-C).
  void request();
  int requests() const { return requests_.load(std::memory_order_acquire); }
  // Readable after request(); the coordinator polls it with the launchers' fds.
  int fd() const { return fd_; }
  // Empties fd() after the coordinator has seen the requests.
  void drain();

 private:
  std::atomic<int> requests_{0};
  int fd_ = -1;
};

}  // namespace chorus
