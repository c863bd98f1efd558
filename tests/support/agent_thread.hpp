// An agent loop (run_agent) on a thread of the test process; stopped and joined when the object
// dies.
#pragma once

#include <atomic>
#include <thread>

#include "runtime/agent/agent.hpp"
#include "runtime/cancel_token.hpp"

namespace chorus::test {

struct AgentThread {
  CancelToken stop;
  Status result;
  std::atomic<bool> done{false};
  std::thread thread;

  explicit AgentThread(AgentOptions options) {
    thread = std::thread([this, options] {
      result = run_agent(options, &stop);
      done = true;
    });
  }
  ~AgentThread() {
    stop.request();
    thread.join();
  }
};

}  // namespace chorus::test
