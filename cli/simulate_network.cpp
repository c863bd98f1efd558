#include "cli/simulate_network.hpp"

#include <fstream>
#include <sstream>

#include "schedulers/netaware/training/training_rows_csv.hpp"
#include "schedulers/sim/workload_io.hpp"

namespace chorus::cli {

void add_network_options(CLI::App& cmd, SimNetworkArgs& a) {
  cmd.add_option(
      "--network", a.network,
      "A modelled network: FILE.json or gen:nodes=K,sources=S,bw=LO:HI,rtt=LO:HI,bg=MAX,"
      "slow=F,period=S,periods=N,seed=N (docs/jct-model.md); placement sees its telemetry "
      "and data tasks take their times from it");
  cmd.add_option("--data", a.data,
                 "With --network: every task moves data, in=LO:HI,out=LO:HI (MB),seed=N "
                 "(default in=1:200,out=0:20); its runtime stays its CPU seconds");
  cmd.add_option("--network-out", a.network_out, "Write the network's description (JSON)");
  cmd.add_option(
      "--rows-out", a.rows_out,
      "Write one training row per placed data task (CSV for `chorus model train --rows`)");
}

Result<std::unique_ptr<SimNetwork>> SimNetwork::make(const SimNetworkArgs& args,
                                                     const sim::SimCluster& cluster) {
  if (args.network.empty()) {
    for (const auto& [flag, value] : {std::pair{"--data", &args.data},
                                      {"--network-out", &args.network_out},
                                      {"--rows-out", &args.rows_out}}) {
      if (!value->empty()) return invalid_argument(std::string(flag) + " needs --network");
    }
    return std::unique_ptr<SimNetwork>();
  }
  auto net = std::make_unique<SimNetwork>();
  net->args_ = args;
  if (args.network.rfind("gen:", 0) == 0) {
    auto m = sim::generate_network(std::string_view(args.network).substr(4), cluster.nodes.size());
    if (!m.ok()) return m.status();
    net->model_ = std::move(*m);
  } else {
    std::ifstream in(args.network, std::ios::binary);
    if (!in) return io_error(args.network + ": cannot open the network description");
    std::ostringstream text;
    text << in.rdbuf();
    auto m = sim::parse_network_json(text.str(), args.network);
    if (!m.ok()) return m.status();
    net->model_ = std::move(*m);
  }
  if (net->model_.nodes.size() != cluster.nodes.size()) {
    return invalid_argument("--network " + args.network + " describes " +
                            std::to_string(net->model_.nodes.size()) + " nodes, --cluster has " +
                            std::to_string(cluster.nodes.size()));
  }
  if (!args.network_out.empty()) {
    if (Status s = sim::write_text_file(args.network_out, sim::network_json(net->model_)); !s.ok())
      return s;
  }
  return net;
}

Status SimNetwork::prepare(sim::Workload& workload) const {
  return sim::assign_data(workload, args_.data, model_.sources.size());
}

void SimNetwork::attach(sim::SimOptions& options, const std::string& run) {
  options.network = &model_;
  options.rows = args_.rows_out.empty() ? nullptr : &pending_;
  // Rows are grouped by background schedule (the network's seed), the unit a holdout split must
  // not cut: two runs on one network share its schedule. `run` (policies, seed) is not part of it.
  (void)run;
  run_ = "net" + std::to_string(model_.seed);
}

void SimNetwork::collect() {
  for (TrainingRow& r : pending_) {
    r.run = run_;
    rows_.push_back(std::move(r));
  }
  pending_.clear();
}

Status SimNetwork::finish() const {
  if (args_.rows_out.empty()) return {};
  std::ostringstream text;
  write_training_rows_csv(text, rows_);
  return sim::write_text_file(args_.rows_out, text.str());
}

}  // namespace chorus::cli
