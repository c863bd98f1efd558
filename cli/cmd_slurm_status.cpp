// chorus slurm-status [JOBID...]: the Slurm state of the given jobs, or of every job recorded in
// <state>/submissions.json by `chorus submit --slurm`, with ONE controller query for all of them.
#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/slurm/slurm_client.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/json_text.hpp"
#include "cli/output/output.hpp"

namespace chorus::cli {
namespace {

struct Recorded {
  std::uint32_t job_id = 0;
  std::string workflow;
  std::string submitted_at;
};

// The records of <state>/submissions.json (format: cli/cmd_submit.cpp). No file: none yet.
Result<std::vector<Recorded>> read_submissions(const std::string& state_dir) {
  std::string path = state_dir + "/submissions.json";
  std::ifstream in(path);
  if (!in) return std::vector<Recorded>{};
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.contains("submissions") || !doc["submissions"].is_array()) {
    return invalid_argument(path + " is not a submissions file written by chorus");
  }
  std::vector<Recorded> out;
  for (const auto& r : doc["submissions"]) {
    if (!r.is_object() || !r.contains("job_id") || !r["job_id"].is_number_unsigned()) {
      return invalid_argument(path + ": a record without a job_id: " + json_text(r));
    }
    Recorded rec;
    rec.job_id = r["job_id"].get<std::uint32_t>();
    if (r.contains("workflow") && r["workflow"].is_string()) rec.workflow = r["workflow"];
    if (r.contains("submitted_at") && r["submitted_at"].is_string()) {
      rec.submitted_at = r["submitted_at"];
    }
    out.push_back(std::move(rec));
  }
  return out;
}

void add_slurm_status_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "slurm-status", "Slurm state of submitted jobs (all recorded ones, or the given ids)");
  struct Args {
    std::vector<std::string> jobs;
    std::string state_dir;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("jobs", a->jobs, "Job ids (default: every job chorus submit recorded here)");
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_flag("--json", a->json, "One JSON object per job and line");
  cmd->callback([a] {
    const Output out = Output::for_command(a->json);
    std::vector<Recorded> jobs;
    if (a->jobs.empty()) {
      auto recorded = read_submissions(resolve_state_dir(a->state_dir));
      if (!recorded.ok()) {
        out.error(recorded.status().message());
        throw CLI::RuntimeError(kExitBadInput);
      }
      jobs = std::move(*recorded);
      if (jobs.empty()) {
        out.no_slurm_jobs(resolve_state_dir(a->state_dir));
        return;
      }
    } else {
      for (const auto& text : a->jobs) {
        Recorded r;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), r.job_id);
        if (ec != std::errc{} || end != text.data() + text.size() || r.job_id == 0) {
          out.error("'" + text + "' is not a Slurm job id (a positive number)");
          throw CLI::RuntimeError(kExitBadInput);
        }
        jobs.push_back(std::move(r));
      }
    }
    std::vector<std::uint32_t> ids;
    ids.reserve(jobs.size());
    for (const auto& j : jobs) ids.push_back(j.job_id);

    auto client = SlurmClient::open();
    if (!client.ok()) {
      out.error(client.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    auto states = (*client)->query(ids);
    if (!states.ok()) {
      out.error(states.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    std::vector<SlurmJobRow> rows;
    rows.reserve(states->size());
    for (std::size_t i = 0; i < states->size(); ++i) {
      rows.push_back({(*states)[i], jobs[i].workflow, jobs[i].submitted_at});
    }
    out.slurm_jobs(rows);
  });
}

const CommandRegistrar registrar{"slurm-status", add_slurm_status_command};

}  // namespace
}  // namespace chorus::cli
