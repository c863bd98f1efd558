// KubeClient: the Kubernetes REST API over HTTPS (libcurl, nlohmann-json), one connection kept
// alive, TLS verified against the cluster CA, a bearer token or a client certificate.
//
// Contract:
// - One thread uses one client (the coordinator's); the watch (kube_watch.hpp) has its own.
// - request() is bounded: connect 5 s, whole request `timeout` (10 s default). A connection
//   failure is retried up to `retries` times with 0.5 s, 1 s, ... between; an HTTP answer is
//   never retried here (the caller knows if its request is idempotent).
// - Errors carry the server's own words: the Status object's message of a 4xx/5xx answer, and
//   the address of a server that cannot be reached. 403 reads "cannot <verb> <resource> in
//   namespace <ns>: <server message>".
// - requests() counts every HTTP request sent, for the benchmark's requests-per-task figure.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "adapters/kubernetes/kube_config.hpp"
#include "core/status.hpp"

namespace chorus::kube {

struct Response {
  long code = 0;     // HTTP status
  std::string body;  // as received
};

class KubeClient {
 public:
  explicit KubeClient(KubeConfig config);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  const KubeConfig& config() const { return config_; }

  // method: GET, POST, PUT, PATCH, DELETE; path: /api/v1/..., with its query. Any HTTP answer is
  // a Response (even 404); only "no answer" is an error.
  Result<Response> raw(std::string_view method, const std::string& path,
                       const std::string& body = {},
                       std::string_view content_type = "application/json");

  // raw() plus: a 2xx answer parsed as JSON, anything else an error in the server's words
  // (`what` names the action for messages: "create pods in namespace ns").
  Result<nlohmann::json> request(std::string_view method, const std::string& path,
                                 const nlohmann::json* body, const std::string& what);

  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  void set_retries(int n) { retries_ = n; }
  std::uint64_t requests() const { return requests_; }

  // The curl handle, already set up for this cluster (TLS, auth): for the watch's stream.
  // Freed with curl_easy_cleanup by the caller.
  void* new_configured_handle() const;

 private:
  KubeConfig config_;
  void* curl_ = nullptr;     // CURL*
  void* headers_ = nullptr;  // curl_slist* (auth + accept)
  std::chrono::milliseconds timeout_{10000};
  int retries_ = 2;
  std::uint64_t requests_ = 0;
};

// A curl easy handle set up for this cluster (TLS, client certificate; not the token header,
// which the caller adds) for streams that outlive one request (the watch, followed logs).
// Freed with curl_easy_cleanup by the caller.
void* configured_curl_handle(const KubeConfig& config);

// The error for a non-2xx answer: the server's Status message, and for 401/403/404 what to do.
Status http_error(const Response& r, const std::string& what, const KubeConfig& config);

}  // namespace chorus::kube
