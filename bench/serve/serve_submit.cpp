// serve_submit: submissions to a running `chorus serve` over its Unix socket, the protocol the
// CLI speaks, without the CLI's process start-up: C client threads, each with its own connection,
// send N submissions in all (each with its own key) one after another and time each reply.
//
//   serve_submit SOCKET WORKFLOW.yaml N CLIENTS KEY_PREFIX [--wait]
//
// Prints one JSON object: per-request latency p50/p99/max (ms), wall seconds, submissions/s, and
// the accepted run ids' count; exits 1 when any submission was not accepted. --wait then follows
// each accepted run in turn (its status every 10 ms, one connection) until all have ended, and
// adds the seconds from the first submission to that point ("until_ended_s") and how many did
// not succeed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/transport/local_socket.hpp"

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(at, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && !(argc == 7 && std::string(argv[6]) == "--wait")) {
    std::fprintf(stderr,
                 "usage: serve_submit SOCKET WORKFLOW.yaml N CLIENTS KEY_PREFIX [--wait]\n");
    return 2;
  }
  const bool wait = argc == 7;
  const std::string socket = argv[1], workflow = argv[2], prefix = argv[5];
  const int n = std::stoi(argv[3]), clients = std::max(1, std::stoi(argv[4]));
  std::ifstream in(workflow);
  std::stringstream text;
  text << in.rdbuf();
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return 3;

  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  std::vector<std::vector<std::string>> run_ids(static_cast<std::size_t>(clients));
  std::vector<int> failures(static_cast<std::size_t>(clients), 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto client = chorus::LocalClientSocket::connect(socket);
      if (!client.ok()) {
        failures[static_cast<std::size_t>(c)] = n;
        return;
      }
      nlohmann::json req{{"op", "submit"},
                         {"path", workflow},
                         {"text", text.str()},
                         {"cwd", cwd},
                         {"mode", "json"}};
      for (int i = c; i < n; i += clients) {
        req["key"] = prefix + "-" + std::to_string(i);
        const auto s = std::chrono::steady_clock::now();
        auto reply = (*client)->request(req.dump(), 30000);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
        auto j = reply.ok() ? nlohmann::json::parse(*reply, nullptr, false) : nlohmann::json();
        if (!j.is_object() || j.value("exit", 1) != 0) {
          ++failures[static_cast<std::size_t>(c)];
          continue;
        }
        latencies[static_cast<std::size_t>(c)].push_back(ms);
        auto doc = nlohmann::json::parse(j.value("out", ""), nullptr, false);
        if (doc.is_object()) run_ids[static_cast<std::size_t>(c)].push_back(doc.value("run", ""));
      }
    });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  int failed = 0;
  for (int c = 0; c < clients; ++c) {
    all.insert(all.end(), latencies[static_cast<std::size_t>(c)].begin(),
               latencies[static_cast<std::size_t>(c)].end());
    failed += failures[static_cast<std::size_t>(c)];
  }
  nlohmann::json out{{"submissions", n},
                     {"clients", clients},
                     {"accepted", all.size()},
                     {"failed", failed},
                     {"wall_s", wall},
                     {"per_s", static_cast<double>(all.size()) / wall},
                     {"p50_ms", percentile(all, 0.5)},
                     {"p99_ms", percentile(all, 0.99)},
                     {"max_ms", percentile(all, 1.0)}};
  if (wait) {
    // Each run in turn until it has ended: one cheap status request per poll, not a list of
    // every run (which would load the server the benchmark measures).
    std::vector<std::string> ids;
    for (const auto& v : run_ids) ids.insert(ids.end(), v.begin(), v.end());
    auto client = chorus::LocalClientSocket::connect(socket);
    if (!client.ok()) return 3;
    std::size_t not_succeeded = 0;
    for (const std::string& id : ids) {
      const std::string ask =
          nlohmann::json{{"op", "status"}, {"run", id}, {"mode", "json"}}.dump();
      while (true) {
        auto reply = (*client)->request(ask, 30000);
        if (!reply.ok()) return 3;
        auto j = nlohmann::json::parse(*reply, nullptr, false);
        const std::string st = j.is_object() ? j.value("run_status", "") : "";
        if (!st.empty() && st != "running") {
          if (st != "succeeded") ++not_succeeded;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    out["until_ended_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out["not_succeeded"] = not_succeeded;
  }
  std::printf("%s\n", out.dump().c_str());
  return failed == 0 ? 0 : 1;
}
