// The completion-time model through the real binary: `chorus simulate --network ... --rows-out`
// rows train a model with `chorus model train --rows`, which TreeModel loads; and the refusals of
// both commands (exit status 2 with a clear message, or 3 where the journal cannot say).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "schedulers/netaware/tree_model.hpp"
#include "support/process.hpp"

using namespace chorus::test;

namespace {

ProcessResult chorus_bounded(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv{"timeout", "-s", "KILL", "120", chorus_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Integration.ModelCli.SimulatorRowsTrainAModelThatLoads") {
  TempDir dir;
  for (const char* seed : {"1", "2", "3"}) {
    auto r =
        chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--scale", "0.02", "--cluster",
                        "4x2", "--network", std::string("gen:sources=2,seed=") + seed, "--data",
                        "in=1:50,out=0:5", "--rows-out", std::string("rows") + seed + ".csv"},
                       dir.path());
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  CHECK(read_lines(dir / "rows1.csv").size() > 100);
  auto r = chorus_bounded({"model", "train", "--rows", "rows1.csv", "--rows", "rows2.csv", "--rows",
                           "rows3.csv", "--trees", "40", "-o", "model.json"},
                          dir.path());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(contains(r.out, "model.json: 40 trees (target log_seconds)"));
  CHECK(contains(r.out, "rows from 1 runs held out"));  // three schedules: one held out
  CHECK(contains(r.out, "holdout: model MAE"));
  auto model = chorus::TreeModel::load(dir / "model.json");
  REQUIRE_MESSAGE(model.ok(), model.status().message());
  CHECK(model->tree_count() == 40);
  CHECK_FALSE(file_exists(dir / "model.json.tmp"));

  // The simulator runs network-aware with that model (--option), as a workflow's
  // `scheduler: {placement: network-aware, model: FILE}` would.
  auto with_model =
      chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--scale", "0.02", "--cluster",
                      "4x2", "--network", "gen:sources=2,seed=4", "--data", "in=1:50,out=0:5",
                      "--placement", "network-aware", "--option", "model=model.json", "--json"},
                     dir.path());
  CHECK_MESSAGE(with_model.exit_code == 0, with_model.err);
  auto missing = chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--placement",
                                 "network-aware", "--option", "model=absent.json"},
                                dir.path());
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err,
                 "--option model: 'model' of placement policy 'network-aware': "
                 "absent.json: cannot open the model file"));
  auto untaken =
      chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--option", "x=1"}, dir.path());
  CHECK(untaken.exit_code == 2);
  CHECK(contains(untaken.err, "--option x: queue policy"));
  auto malformed = chorus_bounded(
      {"simulate", "--workload", "gen:4supersmall", "--option", "model"}, dir.path());
  CHECK(malformed.exit_code == 2);
  CHECK(contains(malformed.err, "is not KEY=VALUE"));
}

TEST_CASE("Integration.ModelCli.TrainRefusesNoRunsTooFewRowsAndRunsWithoutRecords") {
  TempDir dir;
  auto none = chorus_bounded({"model", "train", "-o", "m.json"}, dir.path());
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "no runs to learn from"));

  auto sim =
      chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--scale", "0.01", "--cluster",
                      "2x2", "--network", "gen:sources=1", "--rows-out", "rows.csv"},
                     dir.path());
  REQUIRE_MESSAGE(sim.exit_code == 0, sim.err);
  auto few = chorus_bounded(
      {"model", "train", "--rows", "rows.csv", "--min-rows", "100000", "-o", "m.json"}, dir.path());
  CHECK(few.exit_code == 2);
  CHECK(contains(few.err, "too few training rows: found "));
  CHECK(contains(few.err, ", needs at least 100000"));
  CHECK_FALSE(file_exists(dir / "m.json"));

  // A run whose tasks moved nothing under network-aware placement has no training rows. (Until
  // the journal keeps placement records, the command says that instead, with exit status 3.)
  write_file(dir / "wf.yaml", "tasks:\n  - name: a\n    command: [true]\n");
  auto run = chorus_bounded({"run", "wf.yaml"}, dir.path());
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  auto plain = chorus_bounded({"model", "train", "wf-1", "-o", "m.json"}, dir.path());
  CHECK((plain.exit_code == 2 || plain.exit_code == 3));
  CHECK((contains(plain.err, "no successful network-aware attempts") ||
         contains(plain.err, "keeps no placement records")));
  auto missing = chorus_bounded({"model", "train", "wf-9", "-o", "m.json"}, dir.path());
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "no run 'wf-9'"));
}

TEST_CASE("Integration.ModelCli.SimulateRefusesABadNetwork") {
  TempDir dir;
  auto wrong_size = chorus_bounded(
      {"simulate", "--workload", "gen:4supersmall", "--cluster", "2x2", "--network", "gen:nodes=3"},
      dir.path());
  CHECK(wrong_size.exit_code == 2);
  CHECK(contains(wrong_size.err, "describes 3 nodes, --cluster has 2"));
  write_file(dir / "net.json",
             "{\"format\": \"chorus-sim-network\", \"version\": 1, \"sources\": [\"s\"], "
             "\"nodes\": [{\"links\": [{\"mbps\": -1, \"rtt_ms\": 1}]}]}");
  auto bad = chorus_bounded(
      {"simulate", "--workload", "gen:4supersmall", "--cluster", "1x2", "--network", "net.json"},
      dir.path());
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "net.json: /nodes/0/links/0: mbps and rtt_ms must be positive"));
  auto alone = chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--rows-out", "r.csv"},
                              dir.path());
  CHECK(alone.exit_code == 2);
  CHECK(contains(alone.err, "--rows-out needs --network"));
  auto gen = chorus_bounded({"simulate", "--workload", "gen:4supersmall", "--network", "gen:bw=5"},
                            dir.path());
  CHECK(gen.exit_code == 2);
  CHECK(contains(gen.err, "--network gen: bw=5 is not LO:HI"));
}
