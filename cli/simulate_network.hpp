// `chorus simulate`'s modelled network (schedulers/sim/network_model.hpp): the options
// --network FILE.json|gen:..., --data in=LO:HI,out=LO:HI,seed=N, --network-out FILE.json and
// --rows-out FILE.csv, kept here so cmd_simulate.cpp only calls in.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "schedulers/sim/simulator.hpp"

namespace chorus::cli {

struct SimNetworkArgs {
  std::string network;      // FILE.json or gen:...
  std::string data;         // the data every task moves
  std::string network_out;  // write the (generated) network's description
  std::string rows_out;     // one training row per placed data task
};

void add_network_options(CLI::App& cmd, SimNetworkArgs& args);

// The network of one `chorus simulate` invocation, and the rows its runs produce.
class SimNetwork {
 public:
  // Reads or generates the network for `cluster` (writes --network-out); nullptr when no
  // --network was given. Errors: invalid_argument (the option named), io_error.
  static Result<std::unique_ptr<SimNetwork>> make(const SimNetworkArgs& args,
                                                  const sim::SimCluster& cluster);

  // Gives the workload's tasks their data (--data), checks it against the network.
  Status prepare(sim::Workload& workload) const;
  // Points `options` at the network and at the rows of the next run (labelled by the network's
  // seed: the holdout split's group is the background schedule, whatever `run` is).
  void attach(sim::SimOptions& options, const std::string& run);
  // After each run: labels its rows.
  void collect();
  // Writes --rows-out, if asked.
  Status finish() const;

 private:
  SimNetworkArgs args_;
  sim::NetworkModel model_;
  std::vector<TrainingRow> rows_;
  std::vector<TrainingRow> pending_;
  std::string run_;
};

}  // namespace chorus::cli
