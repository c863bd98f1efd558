#include "adapters/kubernetes/log_follower.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <unordered_map>

#include "adapters/kubernetes/kube_client.hpp"

namespace chorus::kube {
namespace {

struct Transfer {
  std::string pod;
  std::FILE* file = nullptr;
  bool write_failed = false;
};

std::size_t on_data(char* data, std::size_t size, std::size_t n, void* p) {
  auto* t = static_cast<Transfer*>(p);
  if (t->file != nullptr && std::fwrite(data, size, n, t->file) != n) t->write_failed = true;
  // Flushed per chunk: `chorus logs` of a live task reads the file while it grows.
  if (t->file != nullptr) std::fflush(t->file);
  return size * n;
}

}  // namespace

LogFollower::LogFollower(KubeConfig config, std::string namespace_name, int notify_fd)
    : config_(std::move(config)), namespace_(std::move(namespace_name)), notify_fd_(notify_fd) {
  // A first handle runs curl_global_init (once per process, kube_client.cpp) before the multi.
  curl_easy_cleanup(static_cast<CURL*>(configured_curl_handle(config_)));
  multi_ = curl_multi_init();
  thread_ = std::thread([this] { run(); });
}

LogFollower::~LogFollower() {
  stop_ = true;
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
  if (thread_.joinable()) thread_.join();
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

void LogFollower::follow(const std::string& pod, const std::string& file) {
  {
    std::lock_guard lock(mu_);
    wanted_.push_back({pod, file});
  }
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
}

void LogFollower::take_ended(std::vector<EndedLog>& out) {
  std::lock_guard lock(mu_);
  for (auto& e : ended_) out.push_back(std::move(e));
  ended_.clear();
}

void LogFollower::run() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  curl_slist* headers = nullptr;
  if (!config_.token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + config_.token).c_str());
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> live;
  auto end = [&](CURL* h, bool complete) {
    auto it = live.find(h);
    Transfer& t = *it->second;
    if (t.file != nullptr) complete = std::fclose(t.file) == 0 && complete && !t.write_failed;
    curl_multi_remove_handle(multi, h);
    curl_easy_cleanup(h);
    {
      std::lock_guard lock(mu_);
      ended_.push_back({t.pod, complete});
    }
    live.erase(it);
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(notify_fd_, &one, sizeof one);
  };
  while (!stop_) {
    std::vector<Wanted> wanted;
    {
      std::lock_guard lock(mu_);
      wanted.swap(wanted_);
    }
    for (auto& w : wanted) {
      auto t = std::make_unique<Transfer>();
      t->pod = w.pod;
      t->file = std::fopen(w.file.c_str(), "wb");
      if (t->file == nullptr) {  // the fetch at the end says nothing either; the owner decides
        std::lock_guard lock(mu_);
        ended_.push_back({w.pod, false});
        continue;
      }
      CURL* h = static_cast<CURL*>(configured_curl_handle(config_));
      std::string url = config_.server + "/api/v1/namespaces/" + namespace_ + "/pods/" + w.pod +
                        "/log?follow=true";
      curl_easy_setopt(h, CURLOPT_URL, url.c_str());
      if (headers != nullptr) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, t.get());
      curl_easy_setopt(h, CURLOPT_FAILONERROR, 1L);  // a 400 (not started) is not the log
      live.emplace(h, std::move(t));
      ++requests_;
      curl_multi_add_handle(multi, h);
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      long code = 0;
      curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      end(m->easy_handle, m->data.result == CURLE_OK && code == 200);
    }
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  for (auto it = live.begin(); it != live.end(); it = live.begin()) end(it->first, false);
  curl_slist_free_all(headers);
}

}  // namespace chorus::kube
