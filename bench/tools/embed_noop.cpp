// embed_noop N [STATE_DIR]: N no-op function tasks through the embed API with the journal on.
// Prints one JSON line: tasks/s, microseconds per task, peak resident size and bytes per task.
#include <sys/resource.h>

#include <chorus/chorus.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000000;
  std::string state = argc > 2 ? argv[2] : "/tmp/chorus-bench-embed";
  if (n <= 0) {
    std::fprintf(stderr, "usage: embed_noop N [STATE_DIR]\n");
    return 2;
  }
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  auto t0 = std::chrono::steady_clock::now();
  chorus::WorkflowGraph wf;
  wf.name = "noop";
  wf.tasks.reserve(static_cast<std::size_t>(n));
  chorus::TaskFunction noop = [] { return chorus::Status{}; };
  for (long i = 0; i < n; ++i) wf.add(chorus::function_task("t" + std::to_string(i), noop));
  auto t1 = std::chrono::steady_clock::now();
  chorus::RunOptions options;
  options.state_dir = state;
  auto outcome = chorus::run_workflow(wf, options);
  auto t2 = std::chrono::steady_clock::now();
  if (!outcome.ok()) {
    std::fprintf(stderr, "embed_noop: %s\n", outcome.status().message().c_str());
    return 1;
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  double build_s = std::chrono::duration<double>(t1 - t0).count();
  double run_s = std::chrono::duration<double>(t2 - t1).count();
  long ok = static_cast<long>(outcome->summary.progress.succeeded);
  std::printf(
      "{\"tasks\": %ld, \"succeeded\": %ld, \"build_s\": %.4f, \"run_s\": %.4f, "
      "\"tasks_per_s\": %.1f, \"us_per_task\": %.3f, \"peak_rss_bytes\": %ld, "
      "\"bytes_per_task\": %.1f}\n",
      n, ok, build_s, run_s, static_cast<double>(n) / run_s, run_s * 1e6 / static_cast<double>(n),
      after.ru_maxrss * 1024L,
      static_cast<double>(after.ru_maxrss * 1024L) / static_cast<double>(n));
  return ok == n ? 0 : 1;
}
