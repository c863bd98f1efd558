// Coordinator -> agent dispatch, measured on the AgentLauncher itself (no coordinator loop, no
// journal) against a real `chorus agent` process over tcp://127.0.0.1 with CURVE:
//   - latency: one task at a time, launch + flush until its final update is polled (round trip);
//   - rate: N tasks with up to W in flight, launched in batches of B per flush.
// With --dry-run the agent acknowledges tasks without running them (the dispatch path alone);
// without it each task is /bin/true (output not captured).
//
//   agent_dispatch CHORUS_BIN [--dry-run] [--latency K] [--tasks N] [--window W] [--batch B]
// Prints one JSON object.
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/agent/agent_launcher.hpp"

extern char** environ;

namespace {

using chorus::AgentLauncher;
using chorus::Clock;

void wait_activity(const AgentLauncher& l) {
  auto now = Clock::now();
  int ms = 100;
  if (auto d = l.next_deadline()) {
    ms = static_cast<int>(std::clamp<std::int64_t>(
        std::chrono::ceil<std::chrono::milliseconds>(*d - now).count(), 0, 100));
  }
  pollfd fd{l.wait_fd(), POLLIN, 0};
  ::poll(&fd, 1, ms);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: agent_dispatch CHORUS_BIN [--dry-run] [--latency K] [--tasks N] "
                 "[--window W] [--batch B]\n");
    return 2;
  }
  std::string chorus_bin = argv[1];
  bool dry = false;
  std::size_t latency_n = 2000, tasks = 100000, window = 20000, batch = 2000;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return static_cast<std::size_t>(std::atoll(argv[++i])); };
    if (a == "--dry-run") {
      dry = true;
    } else if (a == "--latency" && i + 1 < argc) {
      latency_n = next();
    } else if (a == "--tasks" && i + 1 < argc) {
      tasks = next();
    } else if (a == "--window" && i + 1 < argc) {
      window = next();
    } else if (a == "--batch" && i + 1 < argc) {
      batch = next();
    }
  }

  char tmpl[] = "/tmp/chorus-agent-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  chorus::AgentLauncherOptions options;
  options.key_dir = std::string(tmpl) + "/keys";
  auto launcher = AgentLauncher::start(options);
  if (!launcher.ok()) {
    std::fprintf(stderr, "%s\n", launcher.status().message().c_str());
    return 1;
  }
  AgentLauncher& l = **launcher;
  std::vector<std::string> args{chorus_bin,  "agent",  "--connect", l.endpoint(), "--keys",
                                l.key_dir(), "--node", "bench",     "--cores",    "1000000"};
  if (dry) args.push_back("--dry-run");
  std::vector<char*> cargv;
  for (auto& s : args) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  pid_t agent = -1;
  if (posix_spawn(&agent, cargv[0], nullptr, nullptr, cargv.data(), environ) != 0) return 1;
  auto nodes = l.wait_for_count(1, std::chrono::seconds(30));
  if (!nodes.ok()) {
    std::fprintf(stderr, "%s\n", nodes.status().message().c_str());
    return 1;
  }

  std::vector<chorus::TaskSpec> specs(latency_n + tasks);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    specs[i].id = static_cast<chorus::TaskId>(i);
    specs[i].name = "t" + std::to_string(i);
    specs[i].cmd.argv = {"/bin/true"};
  }
  chorus::LaunchRequest req;
  req.attempt = 1;
  req.node = "bench";
  std::vector<chorus::StateUpdate> out;

  std::vector<double> rtt_us;
  for (std::size_t i = 0; i < latency_n; ++i) {
    req.spec = &specs[i];
    auto t0 = Clock::now();
    if (!l.launch(req).ok()) return 1;
    l.flush();
    out.clear();
    while (out.empty()) {
      l.poll(out);
      if (out.empty()) wait_activity(l);
    }
    rtt_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }

  std::size_t next = latency_n, done = 0, failed = 0;
  auto t0 = Clock::now();
  while (done < tasks) {
    std::size_t queued = 0;
    while (next < specs.size() && l.in_flight() < window && queued < batch) {
      req.spec = &specs[next++];
      if (!l.launch(req).ok()) return 1;
      ++queued;
    }
    if (queued > 0) l.flush();
    out.clear();
    l.poll(out);
    for (const auto& u : out) failed += u.succeeded() ? 0 : 1;
    done += out.size();
    if (out.empty()) wait_activity(l);
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  l.shutdown_agents();
  int status = 0;
  ::waitpid(agent, &status, 0);
  std::printf(
      "{\"mode\": \"%s\", \"latency_samples\": %zu, \"latency_us_p50\": %.1f, "
      "\"latency_us_p99\": %.1f, \"tasks\": %zu, \"failed\": %zu, \"seconds\": %.3f, "
      "\"tasks_per_s\": %.0f, \"window\": %zu, \"batch\": %zu}\n",
      dry ? "dry-run" : "/bin/true", latency_n, percentile(rtt_us, 0.5), percentile(rtt_us, 0.99),
      tasks, failed, secs, static_cast<double>(tasks) / secs, window, batch);
  std::string rm = std::string("rm -rf ") + tmpl;
  return std::system(rm.c_str()) == 0 && failed == 0 ? 0 : 1;
}
