// The result values commands hand to Output (cli/output/output.hpp): what a command computed,
// before it is text or JSON. Plain data; how each is shown is Output's business.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/run_workflow.hpp"
#include "core/node_info.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus {
struct Platform;
struct Plan;
struct PlanOptions;
struct SlurmJobInfo;
namespace sim {
struct Metrics;
}  // namespace sim
}  // namespace chorus

namespace chorus::cli {

// The closing summary of `chorus run` / `chorus launch`.
struct RunReport {
  const RunOutcome& outcome;
  std::string resume_command;  // "chorus run": what the summary tells the user to resume with
  // The last lines of the stderr of the first Output::kShownFailures failures, in order ("" for
  // none or unreadable); the command reads them, Output does not read files.
  std::vector<std::string> stderr_tails;
};

// What the journal says about one node of a run (`chorus status --nodes`).
struct NodeUse {
  NodeInfo info;
  std::vector<std::string> running;  // tasks whose current attempt runs there
  int busy_cores = 0;
  int attempts = 0;  // attempts started there
  int failed = 0;    // attempts that failed there (lost with the node included)
};

// `chorus status`: one run from the journal.
struct RunStatusReport {
  const RunInfo& run;
  RunStatus status = RunStatus::running;  // effective_status(run)
  double elapsed_s = 0;                   // from run.created to now (live) or its last update
  std::array<std::int64_t, 7> counts{};   // tasks per TaskState, indexed by its value
  std::int64_t not_started = 0;
  const std::vector<TaskRecord>& tasks;
  bool all_tasks = false;                     // --tasks: every task, not only the failed ones
  std::optional<std::vector<NodeUse>> nodes;  // --nodes
};

// `chorus why RUN TASK`: one attempt's placement record with what happened after.
struct WhyReport {
  std::string run;
  const PlacementRow& placement;  // candidates[0] = the chosen node
  // The attempt's outcome from its events: "succeeded", "failed", ..., "running".
  std::string outcome;
  double actual_s = -1;  // running -> its end (or now, when still running); < 0 = unknown
  // The features that differ most between the chosen node and the runner-up: (name, chosen,
  // runner-up), most different first; empty with one candidate.
  struct Difference {
    std::string feature;
    double chosen = 0, runner_up = 0;
  };
  std::vector<Difference> differences;
};

// The features that differ most between `p`'s chosen node and its runner-up, at most `shown`:
// relative difference |a - b| / max(|a|, |b|), a feature known on one side only counting as
// fully different, equal ones left out. Empty with fewer than two candidates.
std::vector<WhyReport::Difference> placement_differences(const PlacementRow& p, std::size_t shown);

// One replica of a service of a run (`chorus endpoints`).
struct ServiceReplica {
  std::string name;      // "surrogate" or "surrogate[replica=1]"
  std::string endpoint;  // of its latest ready attempt; empty: none yet
  std::string state;     // as shown: starting, ready, ..., "gone (run interrupted)"
};

// `chorus validate`: a workflow that passed every check.
struct ValidationReport {
  std::string file;
  std::string workflow;
  std::size_t tasks = 0;
  std::size_t dependencies = 0;
};

// `chorus import wfcommons`.
struct ImportReport {
  std::string file;
  std::size_t tasks = 0;
  std::size_t dependencies = 0;
  std::string schema_version;
  std::string output;
};

// `chorus simulate`: the metrics of each policy (medians over the seeds), in the order asked.
struct SimulationTable {
  std::string workload;
  std::size_t jobs = 0;
  std::size_t tasks = 0;
  std::string cluster;  // as given, "8x4"
  int total_cores = 0;
  int seeds = 1;
  std::uint64_t first_seed = 1;
  std::string partition;  // --partition as given; empty: not partitioned
  std::vector<std::pair<std::string, const sim::Metrics*>> policies;
};

// `chorus model train`: the rows it found, the split by run, the holdout error of the model and
// of the analytic estimate alone on the same held-out rows, and the file it wrote.
struct ModelTrainReport {
  std::string output;  // the model file written
  std::string target;  // "log_seconds" | "seconds" | "log_ratio"
  std::size_t trees = 0;
  std::size_t rows = 0;
  std::size_t runs = 0;
  std::size_t train_rows = 0;
  std::size_t train_runs = 0;
  std::size_t holdout_rows = 0;
  std::size_t holdout_runs = 0;
  double model_mae_s = 0;  // on the holdout (a model fitted on the training runs only)
  double model_mape = 0;   // a fraction
  // Holdout rows the model could score (log_ratio: those with an analytic estimate to correct).
  std::size_t model_scored = 0;
  std::size_t analytic_scored = 0;  // holdout rows the analytic estimate could score
  double analytic_mae_s = 0;
  double analytic_mape = 0;
};

// `chorus plan`: a plan and what it was made from.
struct PlanReport {
  const WorkflowGraph& graph;
  std::string file;
  const Platform& platform;
  const Plan& plan;
  const PlanOptions& options;
  double solve_s = 0;
  double fastest_makespan_s = 0;
};

// The one-line summary of the plan `chorus run` follows (`scheduler: {planner: ...}`).
struct LivePlanReport {
  const Plan& plan;
  std::size_t covered = 0;  // tasks the plan places
  std::size_t tasks = 0;
  std::size_t nodes = 0;
  const std::vector<std::string>& too_wide;  // tasks wider than the node planned for them
};

// `chorus slurm-status`: one job, with what `chorus submit` recorded about it (may be empty).
struct SlurmJobRow {
  const SlurmJobInfo& info;
  std::string workflow;
  std::string submitted_at;
};

}  // namespace chorus::cli
