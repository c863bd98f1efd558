// ServiceClient: one request/reply conversation with a replica of the surrogate service over
// ZeroMQ (a REQ socket), one JSON object per message. See README.md for the protocol.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace chorus::hybrid {

// The endpoints of a comma-separated list, as CHORUS_SERVICE_<NAME> holds them for a service with
// replicas ("tcp://127.0.0.1:5600,tcp://127.0.0.1:5601"); empty items are dropped.
std::vector<std::string> split_endpoints(const std::string& list);

// The replica a task talks to: a stable hash (FNV-1a) of `key` modulo `replicas` (> 0).
std::size_t pick_replica(const std::string& key, std::size_t replicas);

// The endpoints in environment variable `name`; fails with a message saying how to set it.
Result<std::vector<std::string>> endpoints_from_env(const char* name);

class ServiceClient {
 public:
  // Connects (ZeroMQ connects lazily: an absent service shows up as a timeout in call()).
  static Result<ServiceClient> connect(const std::string& endpoint,
                                       std::chrono::milliseconds timeout);
  ServiceClient(ServiceClient&& other) noexcept;
  ServiceClient& operator=(ServiceClient&& other) noexcept;
  ServiceClient(const ServiceClient&) = delete;
  ServiceClient& operator=(const ServiceClient&) = delete;
  ~ServiceClient();

  // Sends `request` and waits up to the timeout for the reply. A reply {"ok":false,"error":..}
  // becomes an error Status carrying the service's message. After a timeout the client is
  // unusable (a REQ socket cannot send again before it has received).
  Result<nlohmann::json> call(const nlohmann::json& request);

  const std::string& endpoint() const { return endpoint_; }

 private:
  ServiceClient(void* context, void* socket, std::string endpoint,
                std::chrono::milliseconds timeout);
  void close();

  void* context_ = nullptr;
  void* socket_ = nullptr;
  std::string endpoint_;
  std::chrono::milliseconds timeout_{0};
  bool broken_ = false;
};

}  // namespace chorus::hybrid
