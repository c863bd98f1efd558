// LogFollower: the logs of a run's running Pods written into their tasks' stdout files while
// they run (GET .../pods/NAME/log?follow=true), so `chorus logs` shows a live task's output on
// Kubernetes as on every other backend. One request per Pod (it replaces the fetch at the end),
// all streams on one thread with libcurl's multi interface.
//
// Contract:
// - follow() is called from the owner's thread once the Pod's container has started (the API
//   answers 400 before); it truncates the file and appends what the stream brings.
// - A stream ends when the container ends (Kubernetes closes it) or the connection drops.
//   take_ended() hands over the Pods whose stream ended since the last call, with whether the
//   file is complete (HTTP 200 and a clean end); by then the file is closed. `notify_fd` (an
//   eventfd the owner made, reads and closes) is written to when one ends.
// - The destructor ends every stream within about a second.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_config.hpp"

namespace chorus::kube {

struct EndedLog {
  std::string pod;
  bool complete = false;
};

class LogFollower {
 public:
  LogFollower(KubeConfig config, std::string namespace_name, int notify_fd);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  void follow(const std::string& pod, const std::string& file);
  void take_ended(std::vector<EndedLog>& out);
  std::uint64_t requests() const { return requests_.load(); }

 private:
  struct Wanted {
    std::string pod, file;
  };
  void run();

  KubeConfig config_;
  std::string namespace_;
  int notify_fd_ = -1;
  void* multi_ = nullptr;  // CURLM*
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> requests_{0};
  std::mutex mu_;
  std::vector<Wanted> wanted_;
  std::vector<EndedLog> ended_;
};

}  // namespace chorus::kube
