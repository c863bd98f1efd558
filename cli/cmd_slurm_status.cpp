// chorus slurm-status [JOBID...]: the Slurm state of the given jobs, or of every job recorded in
// <state>/submissions.json by `chorus submit --slurm`, with ONE controller query for all of them.
#include <charconv>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/slurm/slurm_client.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/json_text.hpp"
#include "cli/workflow_input.hpp"

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
    std::vector<Recorded> jobs;
    if (a->jobs.empty()) {
      auto recorded = read_submissions(resolve_state_dir(a->state_dir));
      if (!recorded.ok()) {
        print_error(recorded.status().message());
        throw CLI::RuntimeError(kExitBadInput);
      }
      jobs = std::move(*recorded);
      if (jobs.empty()) {
        std::printf("no Slurm jobs submitted from %s (chorus submit --slurm records them)\n",
                    resolve_state_dir(a->state_dir).c_str());
        return;
      }
    } else {
      for (const auto& text : a->jobs) {
        Recorded r;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), r.job_id);
        if (ec != std::errc{} || end != text.data() + text.size() || r.job_id == 0) {
          print_error("'" + text + "' is not a Slurm job id (a positive number)");
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
      print_error(client.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    auto states = (*client)->query(ids);
    if (!states.ok()) {
      print_error(states.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    if (!a->json)
      std::printf("%-8s %-10s %-12s %-4s %s\n", "JOBID", "STATE", "NODES", "EXIT",
                  "WORKFLOW / REASON");
    for (std::size_t i = 0; i < states->size(); ++i) {
      const SlurmJobInfo& s = (*states)[i];
      const Recorded& r = jobs[i];
      std::string exit = !is_finished(s.state) ? "-"
                         : s.exit_signal != 0  ? "sig" + std::to_string(s.exit_signal)
                                               : std::to_string(s.exit_code);
      if (a->json) {
        nlohmann::json line = {
            {"job_id", s.job_id}, {"state", to_string(s.state)}, {"nodes", s.nodes},
            {"reason", s.reason}, {"exit_code", s.exit_code},    {"exit_signal", s.exit_signal},
            {"name", s.name},     {"workflow", r.workflow},      {"submitted_at", r.submitted_at}};
        std::printf("%s\n", json_text(line).c_str());
        continue;
      }
      std::string detail = r.workflow;
      if (!s.reason.empty() && s.reason != "None") {
        detail += (detail.empty() ? "" : " — ") + s.reason;
      }
      std::printf("%-8u %-10s %-12s %-4s %s\n", s.job_id, to_string(s.state),
                  s.nodes.empty() ? "-" : s.nodes.c_str(), exit.c_str(), detail.c_str());
    }
  });
}

const CommandRegistrar registrar{"slurm-status", add_slurm_status_command};

}  // namespace
}  // namespace chorus::cli
