// Output::run_summary: how `chorus run` and `chorus launch` end on stderr.
#include <cstdio>

#include "cli/output/output.hpp"
#include "core/units.hpp"

namespace chorus::cli {

void Output::run_summary(const RunReport& report) const {
  if (json()) return;
  const RunOutcome& outcome = report.outcome;
  const auto& s = outcome.summary;
  const auto& p = s.progress;
  const char* id = outcome.run.id.c_str();
  double ran = static_cast<double>(p.done() - p.skipped);
  std::fprintf(
      err_,
      "%s: %s — %lld tasks: %lld succeeded%s, %lld failed, %lld cancelled%s in %s (%.1f tasks/s)\n",
      id, to_string(s.status), static_cast<long long>(p.total), static_cast<long long>(p.succeeded),
      p.skipped > 0 ? (" (" + std::to_string(p.skipped) + " from earlier sessions)").c_str() : "",
      static_cast<long long>(p.failed), static_cast<long long>(p.cancelled),
      p.dropped > 0 ? (" (" + std::to_string(p.dropped) + " dropped by quorum)").c_str() : "",
      format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(p.elapsed_s * 1e9)))
          .c_str(),
      p.elapsed_s > 0 ? ran / p.elapsed_s : 0.0);
  for (std::size_t i = 0; i < s.failures.size(); ++i) {
    if (i == kShownFailures) {
      std::fprintf(err_, "... and %zu more failed tasks (chorus status %s)\n",
                   s.failures.size() - kShownFailures, id);
      break;
    }
    const FailedTask& f = s.failures[i];
    std::fprintf(err_, "\n%s %s: %s\n", f.name.c_str(), to_string(f.state), f.message.c_str());
    if (!f.stderr_path.empty()) {
      const std::string& tail = i < report.stderr_tails.size() ? report.stderr_tails[i] : "";
      if (!tail.empty()) std::fprintf(err_, "  stderr (last lines):\n%s\n", tail.c_str());
      std::fprintf(err_, "  full output: chorus logs %s '%s'\n", id, f.name.c_str());
    }
  }
  if (s.status == RunStatus::cancelled || s.status == RunStatus::failed) {
    std::fprintf(err_, "resume with: %s --resume %s\n", report.resume_command.c_str(), id);
  }
}

}  // namespace chorus::cli
