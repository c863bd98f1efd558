#include "adapters/kubernetes/kube_client.hpp"

#include <curl/curl.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace chorus::kube {
namespace {

// curl_global_init is not thread-safe before curl 7.84: once per process, before any handle.
void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::size_t append(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

void set_blob(CURL* h, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(h, option, &blob);
}

}  // namespace

KubeClient::KubeClient(KubeConfig config) : config_(std::move(config)) {
  global_init();
  curl_ = new_configured_handle();
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Accept: application/json");
  if (!config_.token.empty())
    h = curl_slist_append(h, ("Authorization: Bearer " + config_.token).c_str());
  headers_ = h;
}

KubeClient::~KubeClient() {
  curl_easy_cleanup(static_cast<CURL*>(curl_));
  curl_slist_free_all(static_cast<curl_slist*>(headers_));
}

void* KubeClient::new_configured_handle() const {
  return configured_curl_handle(config_);
}

void* configured_curl_handle(const KubeConfig& config_) {
  global_init();
  CURL* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!config_.ca_pem.empty()) set_blob(h, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (config_.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.client_cert_pem.empty()) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(h, CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  return h;
}

Result<Response> KubeClient::raw(std::string_view method, const std::string& path,
                                 const std::string& body, std::string_view content_type) {
  CURL* h = static_cast<CURL*>(curl_);
  std::string url = config_.server + path;
  std::string method_s(method);
  curl_slist* headers = static_cast<curl_slist*>(headers_);
  curl_slist* with_type = nullptr;
  if (!body.empty()) {
    // A private copy of the shared list plus the Content-Type: freed after the request.
    for (curl_slist* p = headers; p != nullptr; p = p->next)
      with_type = curl_slist_append(with_type, p->data);
    with_type =
        curl_slist_append(with_type, ("Content-Type: " + std::string(content_type)).c_str());
  }
  Response r;
  CURLcode rc = CURLE_OK;
  char errbuf[CURL_ERROR_SIZE] = {0};
  for (int attempt = 0;; ++attempt) {
    r.body.clear();
    errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method_s.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, with_type != nullptr ? with_type : headers);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    if (!body.empty()) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    } else {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, nullptr);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
      curl_easy_setopt(h, CURLOPT_HTTPGET, method == "GET" ? 1L : 0L);
      if (method != "GET") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method_s.c_str());
    }
    ++requests_;
    rc = curl_easy_perform(h);
    bool retryable = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                     rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_RECV_ERROR ||
                     rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING;
    if (rc == CURLE_OK || !retryable || attempt >= retries_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500 * (attempt + 1)));
  }
  curl_slist_free_all(with_type);
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    return Status(ErrorCode::unavailable, "the Kubernetes API server at " + config_.server +
                                              " did not answer " + method_s + " " + path + " (" +
                                              why + ", " + std::to_string(retries_ + 1) +
                                              " tries); is the cluster up and the kubeconfig (" +
                                              config_.source + ") right?");
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
  return r;
}

Result<nlohmann::json> KubeClient::request(std::string_view method, const std::string& path,
                                           const nlohmann::json* body, const std::string& what) {
  auto r = raw(method, path, body != nullptr ? body->dump() : std::string{});
  if (!r) return r.status();
  if (r->code < 200 || r->code >= 300) return http_error(*r, what, config_);
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded())
    return Status(ErrorCode::internal,
                  "the API server's answer to " + what + " is not JSON: " + r->body.substr(0, 200));
  return j;
}

Status http_error(const Response& r, const std::string& what, const KubeConfig& config) {
  std::string server_says;
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("message") && j["message"].is_string())
    server_says = j["message"].get<std::string>();
  else
    server_says = r.body.substr(0, 300);
  std::string msg =
      "cannot " + what + ": " + server_says + " (HTTP " + std::to_string(r.code) + ")";
  if (r.code == 401)
    return Status(ErrorCode::invalid_argument, msg + "; the credentials of context '" +
                                                   config.context + "' in " + config.source +
                                                   " were refused");
  if (r.code == 403)
    return Status(ErrorCode::invalid_argument,
                  msg + "; the account of context '" + config.context +
                      "' lacks the rights (a Role granting them, bound to it)");
  if (r.code == 404) return not_found(msg);
  if (r.code == 409 || r.code == 422 || r.code == 400) return invalid_argument(msg);
  return Status(ErrorCode::unavailable, msg);
}

}  // namespace chorus::kube
