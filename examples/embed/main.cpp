// embed: an application that runs a Chorus workflow from C++ — an executable task that writes
// input, 256 function tasks that process slices of it in parallel on the in-process pool, and a
// function task that combines them — through the same coordinator and journal as `chorus run`.
#include <chorus/chorus.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string state_dir = argc > 1 ? argv[1] : ".chorus-embed";
  constexpr int kSlices = 256;

  chorus::WorkflowGraph wf;
  wf.name = "embed";
  auto input = wf.add(chorus::shell_task("write-input", "seq 1 100000 > numbers.txt"));

  std::vector<long> numbers;
  auto load = wf.add(chorus::function_task("load",
                                           [&numbers]() -> chorus::Status {
                                             std::ifstream in("numbers.txt");
                                             if (!in)
                                               return chorus::io_error("cannot read numbers.txt");
                                             for (long v; in >> v;) numbers.push_back(v);
                                             return {};
                                           },
                                           {input}));

  std::array<long, kSlices> partial{};
  std::vector<chorus::TaskId> slices;
  for (int s = 0; s < kSlices; ++s) {
    slices.push_back(wf.add(chorus::function_task(
        "square-sum[" + std::to_string(s) + "]",
        [&numbers, &partial, s] {
          long sum = 0;
          for (std::size_t i = static_cast<std::size_t>(s); i < numbers.size(); i += kSlices) {
            sum += numbers[i] * numbers[i] % 1000003;
          }
          partial[static_cast<std::size_t>(s)] = sum;
        },
        {load})));
  }
  long total = 0;
  wf.add(chorus::function_task(
      "combine", [&] { total = std::accumulate(partial.begin(), partial.end(), 0L); }, slices));

  chorus::RunOptions options;
  options.state_dir = state_dir;
  auto outcome = chorus::run_workflow(wf, options);
  if (!outcome.ok()) {
    std::fprintf(stderr, "embed: %s\n", outcome.status().message().c_str());
    return 2;
  }
  const auto& p = outcome->summary.progress;
  std::printf("run %s: %s, %lld tasks succeeded\n", outcome->run.id.c_str(),
              chorus::to_string(outcome->summary.status), static_cast<long long>(p.succeeded));
  std::printf("sum of squares mod 1000003 over %zu numbers: %ld\n", numbers.size(), total);
  return outcome->summary.status == chorus::RunStatus::succeeded ? 0 : 1;
}
