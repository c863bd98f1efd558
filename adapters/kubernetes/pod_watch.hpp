// PodWatch: ONE watch of a run's Pods by label selector, on a thread of its own, for the whole
// run: a LIST (for its resourceVersion and the Pods already there), then a WATCH from it, again
// from the last version seen after the stream ends or drops, and a fresh LIST after "410 Gone".
// Never a request per Pod.
//
// Contract:
// - take() hands over every Pod object seen since the last call (the latest state of each,
//   ADDED / MODIFIED / DELETED), never blocks. `notify_fd` (an eventfd the owner made, reads
//   and closes) is written to when there is some.
// - Each WATCH asks the server to end it after give_up / 2 (5-240 s) and is taken for dead
//   after 15 s more of silence, so a server that hangs with its connections open is noticed
//   like one that is gone.
// - When the API server has not answered for `give_up` (the server stopped), failed() says
//   why; the watch keeps trying, the launcher decides what to fail.
// - stop() ends the stream within about a second. The destructor stops.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_config.hpp"

namespace chorus::kube {

struct PodEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, or LISTED (from a LIST)
  nlohmann::json pod;
};

class PodWatch {
 public:
  PodWatch(KubeConfig config, std::string namespace_name, std::string label_selector, int notify_fd,
           std::chrono::seconds give_up = std::chrono::seconds(60));
  ~PodWatch();
  PodWatch(const PodWatch&) = delete;
  PodWatch& operator=(const PodWatch&) = delete;

  void start();
  void stop();
  void take(std::vector<PodEvent>& out);
  // Empty while the server answers; else why it does not (for the launcher's message).
  std::string failed() const;
  // HTTP requests the watch sent (LISTs and WATCHes), for the benchmark.
  std::uint64_t requests() const { return requests_.load(); }

 private:
  void run();
  bool list(std::string& resource_version);
  // Returns false on 410 Gone (a fresh LIST is needed).
  bool watch(std::string& resource_version);
  void push(PodEvent e);
  void note_contact(bool ok, const std::string& why);

  KubeConfig config_;
  std::string namespace_, selector_;
  std::chrono::seconds give_up_;
  int event_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> requests_{0};
  mutable std::mutex mu_;
  std::vector<PodEvent> pending_;
  std::string failed_;
  std::chrono::steady_clock::time_point last_contact_;
};

}  // namespace chorus::kube
