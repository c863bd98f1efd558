// chorus submit --slurm [-N NODES] [-t TIME] [-p PARTITION] [--job-name NAME] FILE: submit a
// batch job that runs the workflow inside a Slurm allocation, through libslurm (no sbatch), and
// record the submission in <state>/submissions.json (a small file of its own: the SQLite journal
// belongs to runtime/store and holds runs, not batch jobs).
//
// submissions.json: {"submissions": [{"job_id": 12, "workflow": "/abs/wf.yaml",
//   "submitted_at": "2026-11-30T08:45:12Z", "unix_time": 1795..., "nodes": 4, "partition": "debug",
//   "job_name": "wf", "output": "/abs/slurm-%j.out"}, ...]} — read by `chorus slurm-status`.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/slurm/slurm_client.hpp"
#include "api/run_workflow.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/json_text.hpp"
#include "cli/output/output.hpp"
#include "cli/workflow_input.hpp"

namespace chorus::cli {
namespace {

struct SubmitArgs {
  std::string file;
  bool slurm = false;
  int nodes = 1;
  std::string time_limit;
  std::string partition;
  std::string job_name;
  std::string output;
  std::string state_dir;
  bool parsable = false;
};

// 'text' for a POSIX shell, whatever it holds.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("chorus") : p.string();
}

std::string iso_utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Slurm's "%j" in an output path, for the record (the other % patterns stay as Slurm has them).
std::string expand_job_id(std::string path, std::uint32_t job_id) {
  for (std::size_t at = path.find("%j"); at != std::string::npos; at = path.find("%j", at)) {
    path.replace(at, 2, std::to_string(job_id));
  }
  return path;
}

// Appends one record under an exclusive lock, written to a temporary file then renamed, so a
// reader never sees half a file and two concurrent submits both land.
Status record_submission(const std::string& state_dir, const nlohmann::json& record) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return io_error("cannot create the state folder " + state_dir + ": " + ec.message());
  std::string path = state_dir + "/submissions.json";
  std::string lock_path = path + ".lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return io_error("cannot open " + lock_path + ": " + std::strerror(errno));
  ::flock(lock_fd, LOCK_EX);
  Status result;
  nlohmann::json doc = {{"submissions", nlohmann::json::array()}};
  if (std::ifstream in(path); in) {
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = nlohmann::json::parse(text.str(), nullptr, false);
    if (parsed.is_discarded() || !parsed.contains("submissions") ||
        !parsed["submissions"].is_array()) {
      result =
          invalid_argument(path + " is not a submissions file written by chorus; move it away");
    } else {
      doc = std::move(parsed);
    }
  }
  if (result.ok()) {
    doc["submissions"].push_back(record);
    std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << json_text(doc, 2) << '\n';
      if (!out) result = io_error("cannot write " + tmp + ": " + std::strerror(errno));
    }
    if (result.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
      result = io_error("cannot replace " + path + ": " + std::strerror(errno));
    }
  }
  ::flock(lock_fd, LOCK_UN);
  ::close(lock_fd);
  return result;
}

int submit_command(const SubmitArgs& a) {
  const Output out = Output::for_command(false);
  if (!a.slurm) {
    out.error("chorus submit needs a target: --slurm (the only one so far)");
    return kExitBadInput;
  }
  if (a.nodes < 1) {
    out.error("-N/--nodes must be at least 1, got " + std::to_string(a.nodes));
    return kExitBadInput;
  }
  // Check the workflow here, not minutes later on a compute node. The login node is not where
  // it runs, so its size does not limit the tasks (oversubscribe).
  auto graph = load_workflow_for_cli(a.file, /*oversubscribe=*/true);
  if (!graph.ok()) {
    out.error(graph.status().message());
    return kExitBadInput;
  }
  BatchJobRequest request;
  request.nodes = a.nodes;
  if (!a.time_limit.empty()) {
    auto minutes = parse_slurm_time_limit(a.time_limit);
    if (!minutes.ok()) {
      out.error("-t/--time: " + minutes.status().message());
      return kExitBadInput;
    }
    request.time_limit_minutes = *minutes;
  }
  std::error_code ec;
  std::string work_dir = std::filesystem::current_path(ec).string();
  std::string workflow = std::filesystem::absolute(a.file, ec).lexically_normal().string();
  std::string state_dir = resolve_state_dir(a.state_dir);
  request.partition = a.partition;
  request.job_name = a.job_name.empty() ? graph->name : a.job_name;
  request.work_dir = work_dir;
  if (!a.output.empty()) {
    request.stdout_path = std::filesystem::absolute(a.output, ec).lexically_normal().string();
  } else {
    request.stdout_path = work_dir + "/slurm-%j.out";
  }
  // The batch script runs `chorus launch`, which spreads the workflow over every node of the
  // allocation. Whole nodes are asked for: the tasks' cores are counted against them.
  request.exclusive = true;
  request.no_kill = true;  // a failed node costs its tasks (requeued by chorus launch), not the job
  request.script =
      "#!/bin/bash\n"
      "# Written by chorus submit: runs " +
      workflow +
      " across the allocation\n"
      "cd " +
      shell_quote(work_dir) +
      " || exit 1\n"
      "exec " +
      shell_quote(self_path()) + " launch " + shell_quote(workflow) + " --state " +
      shell_quote(state_dir) + "\n";

  auto client = SlurmClient::open();
  if (!client.ok()) {
    out.error(client.status().message());
    return kExitError;
  }
  auto job = (*client)->submit_batch(request);
  if (!job.ok()) {
    out.error(job.status().message());
    return job.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError;
  }

  std::time_t now = std::time(nullptr);
  nlohmann::json record = {{"job_id", *job},
                           {"workflow", workflow},
                           {"submitted_at", iso_utc(now)},
                           {"unix_time", static_cast<std::int64_t>(now)},
                           {"nodes", a.nodes},
                           {"partition", a.partition},
                           {"job_name", request.job_name},
                           {"output", expand_job_id(request.stdout_path, *job)}};
  Status recorded = record_submission(state_dir, record);
  out.submitted(*job, a.parsable);
  if (!recorded.ok()) {
    // The job runs anyway: say so, so the user does not submit it twice.
    out.error("job " + std::to_string(*job) +
              " was submitted but not recorded: " + recorded.message());
    return kExitError;
  }
  return kExitOk;
}

void add_submit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("submit", "Submit a workflow as a batch job (Slurm)");
  auto a = std::make_shared<SubmitArgs>();
  cmd->add_option("file", a->file, "The workflow file (YAML)")->required();
  cmd->add_flag("--slurm", a->slurm, "Submit to Slurm through libslurm (SLURM_CONF is honoured)");
  cmd->add_option("-N,--nodes", a->nodes, "Number of nodes")->default_str("1");
  cmd->add_option("-t,--time", a->time_limit,
                  "Time limit: MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] (default: the partition's)");
  cmd->add_option("-p,--partition", a->partition, "Partition (default: the cluster's default)");
  cmd->add_option("-J,--job-name", a->job_name, "Job name (default: the workflow's name)");
  cmd->add_option("-o,--output", a->output,
                  "The job's output file (%j is the job id; default: slurm-%j.out here)");
  cmd->add_option("--state", a->state_dir,
                  "State folder for the run and submissions.json (default: .chorus here)");
  cmd->add_flag("--parsable", a->parsable, "Print only the job id");
  cmd->callback([a] {
    int code = submit_command(*a);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

const CommandRegistrar registrar{"submit", add_submit_command};

}  // namespace
}  // namespace chorus::cli
