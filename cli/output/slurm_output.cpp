// Output's forms of the Slurm commands' results: submit, slurm-status, slurm-cancel.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "adapters/slurm/slurm_client.hpp"
#include "cli/output/output.hpp"

namespace chorus::cli {

void Output::submitted(std::uint32_t job_id, bool parsable) const {
  if (parsable) {
    std::fprintf(out_, "%u\n", job_id);
  } else {
    std::fprintf(out_, "Submitted batch job %u\n", job_id);
  }
  flush();
}

void Output::no_slurm_jobs(const std::string& state_dir) const {
  std::fprintf(out_, "no Slurm jobs submitted from %s (chorus submit --slurm records them)\n",
               state_dir.c_str());
}

void Output::slurm_jobs(const std::vector<SlurmJobRow>& jobs) const {
  if (!json()) {
    std::fprintf(out_, "%-8s %-10s %-12s %-4s %s\n", "JOBID", "STATE", "NODES", "EXIT",
                 "WORKFLOW / REASON");
  }
  for (const auto& row : jobs) {
    const SlurmJobInfo& s = row.info;
    if (json()) {
      json_line({{"job_id", s.job_id},
                 {"state", to_string(s.state)},
                 {"nodes", s.nodes},
                 {"reason", s.reason},
                 {"exit_code", s.exit_code},
                 {"exit_signal", s.exit_signal},
                 {"name", s.name},
                 {"workflow", row.workflow},
                 {"submitted_at", row.submitted_at}});
      continue;
    }
    std::string exit = !is_finished(s.state) ? "-"
                       : s.exit_signal != 0  ? "sig" + std::to_string(s.exit_signal)
                                             : std::to_string(s.exit_code);
    std::string detail = row.workflow;
    if (!s.reason.empty() && s.reason != "None") {
      detail += (detail.empty() ? "" : " — ") + s.reason;
    }
    std::fprintf(out_, "%-8u %-10s %-12s %-4s %s\n", s.job_id, to_string(s.state),
                 s.nodes.empty() ? "-" : s.nodes.c_str(), exit.c_str(), detail.c_str());
  }
}

void Output::slurm_cancelled(std::uint32_t job_id) const {
  std::fprintf(out_, "cancelled job %u\n", job_id);
}

}  // namespace chorus::cli
