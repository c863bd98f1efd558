// Output: the one place where the chorus command's results become text or JSON.
//
// A command makes one Output for its invocation (Output::for_command(json)), computes a result
// value (cli/output/results.hpp) and hands it over: one function per kind of result. Output
// knows the mode (human on a terminal, human on a pipe, or --json) and the two streams: results
// go to stdout, errors, notes and the human forms of run progress to stderr. JSON text always goes
// through json_text (cli/json_text.hpp), so it is valid UTF-8 whatever the journal holds.
// Live progress of a run is ProgressPrinter (cli/output/progress_printer.hpp), over an Output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/output/quorum_results.hpp"
#include "cli/output/results.hpp"

namespace chorus::cli {

enum class OutputMode { terminal, plain, json };

// json when asked; otherwise terminal when stderr is a TTY and TERM is not "dumb", else plain.
OutputMode pick_output_mode(bool json);

class Output {
 public:
  // The mode pick_output_mode(json) gives, on stdout and stderr.
  static Output for_command(bool json);
  // Tests pass streams of their own (open_memstream).
  explicit Output(OutputMode mode, std::FILE* out = stdout, std::FILE* err = stderr)
      : mode_(mode), out_(out), err_(err) {}

  OutputMode mode() const { return mode_; }
  bool json() const { return mode_ == OutputMode::json; }
  std::FILE* out() const { return out_; }
  std::FILE* err() const { return err_; }

  // --- building blocks (for the result functions below and ProgressPrinter) -------------------
  // An error on stderr as "chorus: <message>"; a located diagnostic ("wf.yaml:3:5: ...") and
  // multi-line diagnostics stay as they are. In every mode: errors are never JSON.
  void error(std::string_view message) const;
  // A remark on stderr that is not an error, "chorus: <text>".
  void note(std::string_view text) const;
  // One JSON document on stdout: one line (indent < 0) or pretty-printed, then a newline.
  void json_document(const nlohmann::json& j, int indent = 2) const;
  void json_document(const nlohmann::ordered_json& j, int indent = 2) const;
  // One JSON object as one line on stdout, not flushed: the caller flushes once per batch.
  void json_line(const nlohmann::json& j) const;
  void flush() const { std::fflush(out_); }

  // --- chorus run / launch ----------------------------------------------------------------------
  // How many failed tasks the summary shows with their stderr (the rest are counted).
  static constexpr std::size_t kShownFailures = 10;
  // The closing summary on stderr: counts, rate, failures with their stderr tails, how to
  // resume. Nothing with --json (the "summary" event of ProgressPrinter is its JSON form).
  void run_summary(const RunReport& report) const;

  // --- the journal's commands -------------------------------------------------------------------
  // `chorus list`: statuses already effective (effective_status).
  void run_list(const std::vector<RunInfo>& runs) const;
  // `chorus status`.
  void run_status(const RunStatusReport& report) const;
  // `chorus endpoints`: a table (or a line saying there are none).
  void service_endpoints(const std::string& run_id,
                         const std::vector<ServiceReplica>& replicas) const;
  // `chorus endpoints --env`: NAME=value lines, as tasks get them.
  void environment(const std::vector<std::pair<std::string, std::string>>& variables) const;
  // `chorus cancel`, in the order things happen.
  void run_already_ended(const std::string& run_id, RunStatus status) const;
  // `done`: what was stopped of what the run had left running ("stopped 2 processes it had left
  // running"), or why nothing could be; "" when there was nothing to say.
  void run_marked_cancelled(const std::string& run_id, const std::string& done) const;
  void run_cancelling(const std::string& run_id, std::int64_t coordinator_pid) const;
  void run_ended(const std::string& run_id, RunStatus status) const;
  // `chorus why`: the candidates with their predictions, the basis, what drove the choice.
  void placement_why(const WhyReport& report) const;
  // `chorus report`: where the page was written.
  void report_written(const std::string& path) const;

  // --- workflows, planning, simulation ----------------------------------------------------------
  void validation(const ValidationReport& report) const;
  void imported(const ImportReport& report) const;
  void plan(const PlanReport& report) const;
  // On stderr; nothing with --json.
  void live_plan(const LivePlanReport& report) const;
  void simulation(const SimulationTable& table) const;
  // `chorus simulate-quorum`: time to the target loss per policy, medians over the seeds.
  void quorum_simulation(const QuorumSimTable& table) const;
  // `chorus model train`: what it trained on and its holdout error (stdout).
  void model_trained(const ModelTrainReport& report) const;

  // --- Slurm
  // -------------------------------------------------------------------------------------- `chorus
  // submit`: the job id (only it with --parsable), flushed at once.
  void submitted(std::uint32_t job_id, bool parsable) const;
  // `chorus slurm-status`: a table, or one JSON object per job and line.
  void slurm_jobs(const std::vector<SlurmJobRow>& jobs) const;
  void no_slurm_jobs(const std::string& state_dir) const;
  // `chorus slurm-cancel`: one line per job cancelled.
  void slurm_cancelled(std::uint32_t job_id) const;

 private:
  OutputMode mode_;
  std::FILE* out_;
  std::FILE* err_;
};

// An error of a command that has no Output at hand (shared plumbing: journal_access,
// run_common): the same text as Output::error, on stderr.
void print_error(std::string_view message);

}  // namespace chorus::cli
