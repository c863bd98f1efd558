// coupling_client [--endpoint E | --service NAME] [-n N] [--size BYTES] [--warmup W]: the task
// side of the coupling benchmark. Sends N requests of BYTES bytes, one at a time, over a ZeroMQ
// REQ socket and prints one JSON line:
//   {"endpoint":..,"n":..,"size":..,"p50_us":..,"p99_us":..,"max_us":..,"rps":..}
// The endpoint is E, or else the environment variable CHORUS_SERVICE_<NAME> (NAME upper-cased,
// default "echo") that Chorus gives a task using that service; with several replicas listed
// (comma-separated) it takes the one CHORUS_TASK hashes to. The first W round trips (default 100)
// are not counted: they include connection set-up.
#include <zmq.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: coupling_client [--endpoint E | --service NAME] [-n N] [--size BYTES] "
               "[--warmup W]\n");
  return 2;
}

std::string endpoint_from_env(const std::string& service) {
  std::string var = "CHORUS_SERVICE_";
  for (char c : service) {
    const auto u = static_cast<unsigned char>(c);
    var += std::isalnum(u) != 0 ? static_cast<char>(std::toupper(u)) : '_';
  }
  const char* value = std::getenv(var.c_str());
  if (value == nullptr) return "";
  std::vector<std::string> replicas;
  const std::string list = value;
  for (std::size_t start = 0; start < list.size();) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) replicas.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  if (replicas.empty()) return "";
  const char* task = std::getenv("CHORUS_TASK");
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a of the task name
  for (const char* p = task != nullptr ? task : ""; *p != '\0'; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ULL;
  return replicas[h % replicas.size()];
}

}  // namespace

int main(int argc, char** argv) {
  std::string endpoint, service = "echo";
  long n = 10000, size = 64, warmup = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const char* value = argv[i + 1];
    if (arg == "--endpoint")
      endpoint = value;
    else if (arg == "--service")
      service = value;
    else if (arg == "-n")
      n = std::strtol(value, nullptr, 10);
    else if (arg == "--size")
      size = std::strtol(value, nullptr, 10);
    else if (arg == "--warmup")
      warmup = std::strtol(value, nullptr, 10);
    else
      return usage();
  }
  if (argc % 2 == 0 || n < 1 || size < 0 || warmup < 0) return usage();
  if (endpoint.empty()) endpoint = endpoint_from_env(service);
  if (endpoint.empty()) {
    std::fprintf(stderr,
                 "coupling_client: no --endpoint and no CHORUS_SERVICE_* for service '%s'\n",
                 service.c_str());
    return 2;
  }

  void* context = zmq_ctx_new();
  void* socket = zmq_socket(context, ZMQ_REQ);
  const int linger = 0, timeout_ms = 10000;
  zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(socket, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
  if (zmq_connect(socket, endpoint.c_str()) != 0) {
    std::fprintf(stderr, "coupling_client: cannot connect to %s: %s\n", endpoint.c_str(),
                 zmq_strerror(zmq_errno()));
    return 1;
  }
  std::vector<char> request(static_cast<std::size_t>(size), 'x'), reply(request.size() + 1);
  std::vector<double> micros;
  micros.reserve(static_cast<std::size_t>(n));
  using Clock = std::chrono::steady_clock;
  Clock::time_point start{};
  int rc = 0;
  for (long i = 0; i < warmup + n; ++i) {
    if (i == warmup) start = Clock::now();
    const auto t0 = Clock::now();
    if (zmq_send(socket, request.data(), request.size(), 0) < 0 ||
        zmq_recv(socket, reply.data(), reply.size(), 0) != static_cast<int>(request.size())) {
      std::fprintf(stderr, "coupling_client: round trip %ld to %s failed: %s\n", i,
                   endpoint.c_str(), zmq_strerror(zmq_errno()));
      rc = 1;
      break;
    }
    if (i >= warmup)
      micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  zmq_close(socket);
  zmq_ctx_term(context);
  if (rc != 0) return rc;

  std::sort(micros.begin(), micros.end());
  // Nearest-rank percentiles.
  auto pct = [&](double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * micros.size()));
    return micros[std::clamp<std::size_t>(rank, 1, micros.size()) - 1];
  };
  std::printf(
      "{\"endpoint\":\"%s\",\"n\":%ld,\"size\":%ld,\"p50_us\":%.1f,\"p99_us\":%.1f,"
      "\"max_us\":%.1f,\"rps\":%.0f}\n",
      endpoint.c_str(), n, size, pct(50), pct(99), micros.back(), n / seconds);
  return 0;
}
