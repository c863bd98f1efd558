#include "adapters/kubernetes/pod_watch.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>

#include "adapters/kubernetes/kube_client.hpp"

namespace chorus::kube {
namespace {

struct Stream {
  PodWatch* self = nullptr;
  std::string buffer;
  std::string* resource_version = nullptr;
  bool gone = false;
  std::atomic<bool>* stop = nullptr;
  std::function<void(PodEvent)> push;
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* p) {
  auto* s = static_cast<Stream*>(p);
  s->buffer.append(data, size * n);
  std::size_t start = 0;
  for (std::size_t nl; (nl = s->buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    auto j =
        nlohmann::json::parse(s->buffer.begin() + static_cast<std::ptrdiff_t>(start),
                              s->buffer.begin() + static_cast<std::ptrdiff_t>(nl), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    std::string type = j.value("type", "");
    const auto& obj = j.contains("object") ? j["object"] : nlohmann::json();
    if (type == "ERROR") {
      if (obj.is_object() && obj.value("code", 0) == 410) s->gone = true;
      continue;
    }
    if (obj.is_object() && obj.contains("metadata"))
      *s->resource_version = obj["metadata"].value("resourceVersion", *s->resource_version);
    if (type == "BOOKMARK") continue;
    s->push(PodEvent{type, obj});
  }
  s->buffer.erase(0, start);
  return size * n;
}

int on_progress(void* p, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Stream*>(p)->stop->load() ? 1 : 0;
}

}  // namespace

PodWatch::PodWatch(KubeConfig config, std::string namespace_name, std::string label_selector,
                   int notify_fd, std::chrono::seconds give_up)
    : config_(std::move(config)),
      namespace_(std::move(namespace_name)),
      selector_(std::move(label_selector)),
      give_up_(give_up),
      event_fd_(notify_fd),
      last_contact_(std::chrono::steady_clock::now()) {}

PodWatch::~PodWatch() {
  stop();
}

void PodWatch::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void PodWatch::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PodWatch::take(std::vector<PodEvent>& out) {
  std::lock_guard lock(mu_);
  for (auto& e : pending_) out.push_back(std::move(e));
  pending_.clear();
}

std::string PodWatch::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void PodWatch::push(PodEvent e) {
  {
    std::lock_guard lock(mu_);
    pending_.push_back(std::move(e));
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(event_fd_, &one, sizeof one);
}

void PodWatch::note_contact(bool ok, const std::string& why) {
  std::lock_guard lock(mu_);
  auto now = std::chrono::steady_clock::now();
  if (ok) {
    last_contact_ = now;
    failed_.clear();
    return;
  }
  if (now - last_contact_ >= give_up_ && failed_.empty()) {
    failed_ = why;
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(event_fd_, &one, sizeof one);
  }
}

bool PodWatch::list(std::string& resource_version) {
  KubeClient client(config_);
  client.set_retries(0);
  ++requests_;
  auto j =
      client.request("GET", "/api/v1/namespaces/" + namespace_ + "/pods?labelSelector=" + selector_,
                     nullptr, "list pods in namespace " + namespace_);
  if (!j) {
    note_contact(false, j.status().message());
    return false;
  }
  note_contact(true, {});
  resource_version = (*j)["metadata"].value("resourceVersion", "");
  for (auto& pod : (*j)["items"]) push(PodEvent{"LISTED", std::move(pod)});
  return true;
}

bool PodWatch::watch(std::string& resource_version) {
  CURL* h = static_cast<CURL*>(KubeClient(config_).new_configured_handle());
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!config_.token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + config_.token).c_str());
  // The server ends a watch after timeoutSeconds; we then continue from the last version. Half
  // of give_up (5-240 s), so that a server that hangs (a stopped process: the connection stays
  // open, silent) is told from a quiet healthy one by the low-speed limit below, well within
  // give_up, at the cost of one re-watch request per that many seconds.
  const long seconds = std::clamp<long>(static_cast<long>(give_up_.count()) / 2, 5, 240);
  std::string url = config_.server + "/api/v1/namespaces/" + namespace_ +
                    "/pods?watch=1&labelSelector=" + selector_ +
                    "&resourceVersion=" + resource_version +
                    "&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(seconds);
  Stream s;
  s.self = this;
  s.resource_version = &resource_version;
  s.stop = &stop_;
  s.push = [this](PodEvent e) { push(std::move(e)); };
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &s);
  // Silent 15 s past the server's own end of the watch: a dead (or hung) server.
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, seconds + 15);
  ++requests_;
  CURLcode rc = curl_easy_perform(h);
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (code == 410) s.gone = true;
  if (rc == CURLE_OK || rc == CURLE_ABORTED_BY_CALLBACK || code != 0)
    note_contact(true, {});
  else
    note_contact(false, "the Kubernetes API server at " + config_.server + " stopped answering (" +
                            curl_easy_strerror(rc) + ")");
  return !s.gone;
}

void PodWatch::run() {
  std::string rv;
  bool listed = false;
  while (!stop_) {
    if (!listed) {
      listed = list(rv);
      if (!listed) {
        for (int i = 0; i < 10 && !stop_; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
    }
    auto before = std::chrono::steady_clock::now();
    if (!watch(rv)) listed = false;  // 410 Gone: list again
    // A stream that failed at once: do not spin against a server that is down.
    if (!stop_ && std::chrono::steady_clock::now() - before < std::chrono::seconds(1))
      for (int i = 0; i < 5 && !stop_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace chorus::kube
