// chorus model train RUN... [--rows FILE.csv]... -o model.json: fits the completion-time model of
// network-aware placement (docs/jct-model.md) from the journal's placement records and/or rows
// files, prints the split by run and the holdout error, and writes the model file.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/model/train_model.hpp"
#include "cli/model/training_rows.hpp"
#include "cli/output/output.hpp"
#include "schedulers/netaware/training/training_rows_csv.hpp"

namespace chorus::cli {
namespace {

// The chosen candidate of each placement record of a run (StateStore::placements).
Result<std::vector<PlacedAttempt>> placed_attempts(StateStore& store, const std::string& run_id) {
  auto rows = store.placements(run_id);
  if (!rows.ok()) return rows.status();
  std::vector<PlacedAttempt> out;
  out.reserve(rows->size());
  for (const auto& p : *rows) {
    PlacedAttempt a;
    a.task = p.task;
    a.attempt = p.attempt;
    a.policy = p.policy;
    if (!p.candidates.empty()) {
      a.features.assign(p.candidates.front().features.begin(), p.candidates.front().features.end());
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

[[noreturn]] void fail(const Output& out, const std::string& message, int code) {
  out.error(message);
  throw CLI::RuntimeError(code);
}

struct TrainArgs {
  std::vector<std::string> runs;
  std::vector<std::string> rows_files;
  std::string state_dir;
  std::string output;
  std::string target = "log_seconds";
  int trees = 300;
  int depth = 6;
  double eta = 0.1;
  std::uint64_t seed = 1;
  double holdout = 0.25;
  std::size_t min_rows = 50;
  bool json = false;
};

void train(const TrainArgs& a) {
  const Output out = Output::for_command(a.json);
  if (a.runs.empty() && a.rows_files.empty()) {
    fail(out,
         "model train: no runs to learn from: give run ids (chorus model train RUN...) or --rows "
         "FILE.csv",
         kExitBadInput);
  }
  std::vector<TrainingRow> rows;
  if (!a.runs.empty()) {
    std::size_t succeeded = 0;
    std::size_t placed = 0;
    std::size_t from_journal = 0;
    std::size_t without_features = 0;
    for (const std::string& id : a.runs) {
      OpenedRun run = open_run_or_exit(a.state_dir, id);
      const std::vector<EventRecord> events = events_or_exit(*run.store, run.run);
      auto placements = placed_attempts(*run.store, run.run.id);
      if (!placements.ok()) fail(out, placements.status().message(), kExitError);
      RunRows r = training_rows(*placements, events, run.run.id);
      succeeded += r.succeeded;
      placed += r.placed;
      without_features += r.without_features;
      from_journal += r.rows.size();
      for (TrainingRow& row : r.rows) rows.push_back(std::move(row));
    }
    if (from_journal == 0) {
      fail(
          out,
          "model train: no successful network-aware attempts in the runs given: " +
              std::to_string(succeeded) + " attempts succeeded, " + std::to_string(placed) +
              " attempts have placement records" +
              (without_features > 0 ? " (" + std::to_string(without_features) + " without features)"
                                    : std::string()) +
              "; run data tasks with `scheduler: {placement: network-aware}` first",
          kExitBadInput);
    }
  }
  for (const std::string& file : a.rows_files) {
    auto r = read_training_rows_csv(file);
    if (!r.ok()) {
      fail(out, r.status().message(),
           r.status().code() == ErrorCode::io_error ? kExitError : kExitBadInput);
    }
    for (TrainingRow& row : *r) rows.push_back(std::move(row));
  }
  ModelTrainOptions options;
  options.train.target = *parse_model_target(a.target);  // checked by the option
  options.train.rounds = a.trees;
  options.train.max_depth = a.depth;
  options.train.eta = a.eta;
  options.train.seed = a.seed;
  options.split_seed = a.seed;
  options.holdout = a.holdout;
  options.min_rows = a.min_rows;
  options.created = utc_now();
  auto trained = train_model(rows, options, a.output);
  if (!trained.ok()) {
    fail(out, "model train: " + trained.status().message(),
         trained.status().code() == ErrorCode::invalid_argument ? kExitBadInput : kExitError);
  }
  // Written beside, then renamed: a reader never sees half a model.
  const std::string tmp = a.output + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << trained->text;
    f.close();
    if (!f) fail(out, a.output + ": cannot write the model file", kExitError);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, a.output, ec);
  if (ec) fail(out, a.output + ": cannot write the model file: " + ec.message(), kExitError);
  out.model_trained(trained->report);
}

void add_model_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("model", "The completion-time model of network-aware placement");
  cmd->require_subcommand(1);
  auto* tr = cmd->add_subcommand(
      "train", "Fit a completion-time model (XGBoost) from runs' placement records or rows files");
  auto a = std::make_shared<TrainArgs>();
  tr->add_option("runs", a->runs, "Runs whose successful attempts become training rows");
  tr->add_option("--rows", a->rows_files,
                 "CSV rows (header: the feature names, seconds, optionally run), e.g. from "
                 "`chorus simulate --rows-out`; repeatable");
  tr->add_option("--state,--store", a->state_dir, "State folder (default: .chorus)");
  tr->add_option("-o,--output", a->output, "The model file to write")->required();
  tr->add_option("--target", a->target,
                 "What the trees fit: log_seconds (default), seconds, or log_ratio (the analytic "
                 "estimate's error: log(seconds / analytic_s))")
      ->check(CLI::IsMember({"log_seconds", "seconds", "log_ratio"}));
  tr->add_option("--trees", a->trees, "Boosting rounds (default 300)")
      ->check(CLI::Range(1, 100000));
  tr->add_option("--depth", a->depth, "Maximum tree depth (default 6)")->check(CLI::Range(1, 16));
  tr->add_option("--eta", a->eta, "Learning rate (default 0.1)")->check(CLI::Range(1e-6, 1.0));
  tr->add_option("--seed", a->seed, "Seed of the training and of the split (default 1)");
  tr->add_option("--holdout", a->holdout, "Fraction of runs held out (default 0.25)")
      ->check(CLI::Range(0.0, 0.9));
  tr->add_option("--min-rows", a->min_rows, "Refuse fewer rows than this (default 50)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
  tr->add_flag("--json", a->json, "Print the result as JSON");
  tr->callback([a] { train(*a); });
}

const CommandRegistrar registrar{"model", add_model_command};

}  // namespace
}  // namespace chorus::cli
