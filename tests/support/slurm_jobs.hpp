// Batch jobs on the test cluster, the way a user drives them: sbatch, squeue.
#pragma once

#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace chorus::test {

// sbatch -t 5:00 -o job.out ARGS --wrap SCRIPT in `dir`; the job id.
inline unsigned submit_job(const std::vector<std::string>& sbatch_args, const std::string& script,
                           const std::string& dir) {
  std::vector<std::string> argv{"sbatch", "-t", "5:00", "-o", "job.out"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.insert(argv.end(), {"--wrap", script});
  auto sub = run_process(argv, dir);
  INFO(sub.out, sub.err);
  std::smatch m;
  REQUIRE(std::regex_search(sub.out, m, std::regex(R"(Submitted batch job (\d+))")));
  return static_cast<unsigned>(std::stoul(m[1]));
}

// PENDING, RUNNING, COMPLETED, ... ("" once Slurm forgot it).
inline std::string batch_job_state(unsigned job) {
  auto r = run_process({"squeue", "-h", "-t", "all", "-j", std::to_string(job), "-o", "%T"}, "/");
  std::string s = r.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Waits (bounded) for the job to end; its final state.
inline std::string wait_batch_job(unsigned job, double seconds = 90) {
  std::string state;
  eventually(
      [&] {
        state = batch_job_state(job);
        return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" ||
               state == "TIMEOUT" || state == "NODE_FAIL" || state == "OUT_OF_MEMORY";
      },
      seconds);
  return state;
}

}  // namespace chorus::test
