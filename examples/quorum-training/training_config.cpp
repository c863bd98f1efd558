#include "examples/quorum-training/training_config.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "schedulers/quorum/sgd/digits.hpp"
#include "schedulers/quorum/sgd/logistic_workload.hpp"
#include "schedulers/quorum/sgd/round_simulator.hpp"

namespace quorum_training {

using chorus::Result;
using chorus::Status;
using nlohmann::json;

Status validate(const TrainingConfig& c) {
  auto bad = [](std::string m) { return chorus::invalid_argument(std::move(m)); };
  if (c.workload != "logistic" && c.workload != "digits") {
    return bad("workload '" + c.workload + "' is not known: use logistic or digits");
  }
  if (c.dim < 1 || c.samples < 1) return bad("dim and samples must be at least 1");
  if (c.batch < 1) return bad("batch must be at least 1");
  if (c.n < 1 || c.n > 1024) return bad("n must be between 1 and 1024 workers");
  if (!(c.learning_rate > 0)) return bad("the learning rate must be positive");
  if (!chorus::sgd::parse_scenario(c.scenario)) {
    return bad("scenario '" + c.scenario + "' is not known: use S0..S6");
  }
  if (c.max_rounds < 1) return bad("max_rounds must be at least 1");
  if (c.checkpoint_every < 1) return bad("checkpoint_every must be at least 1");
  if (c.target_loss < 0) return bad("target_loss must be 0 (none) or positive");
  return Status::ok_status();
}

std::string to_json(const TrainingConfig& c) {
  json j = {{"workload", c.workload},
            {"dim", c.dim},
            {"samples", c.samples},
            {"l2", c.l2},
            {"data_seed", c.data_seed},
            {"batch", c.batch},
            {"learning_rate", c.learning_rate},
            {"n", c.n},
            {"mode", c.mode == Mode::timed ? "timed" : "interrupt"},
            {"policy", c.policy},
            {"policy_options", c.policy_options},
            {"scenario", c.scenario},
            {"base_s", c.trace.base_s},
            {"tail_s", c.trace.tail_s},
            {"pareto_alpha", c.trace.pareto_alpha},
            {"slow_factor", c.trace.slow_factor},
            {"switch_at", c.trace.switch_at},
            {"trace_seed", c.trace_seed},
            {"max_rounds", c.max_rounds},
            {"target_loss", c.target_loss},
            {"timed_grace_s", c.timed_grace_s},
            {"checkpoint_every", c.checkpoint_every},
            {"curvature_probe", c.curvature_probe}};
  return j.dump(2) + "\n";
}

Result<TrainingConfig> config_from_json(const std::string& text, const std::string& source) {
  TrainingConfig c;
  try {
    const json j = json::parse(text);
    c.workload = j.at("workload").get<std::string>();
    c.dim = j.at("dim").get<int>();
    c.samples = j.at("samples").get<int>();
    c.l2 = j.at("l2").get<double>();
    c.data_seed = j.at("data_seed").get<std::uint64_t>();
    c.batch = j.at("batch").get<int>();
    c.learning_rate = j.at("learning_rate").get<double>();
    c.n = j.at("n").get<int>();
    c.mode = j.at("mode").get<std::string>() == "timed" ? Mode::timed : Mode::interrupt;
    c.policy = j.at("policy").get<std::string>();
    c.policy_options = j.at("policy_options").get<std::map<std::string, std::string>>();
    c.scenario = j.at("scenario").get<std::string>();
    c.trace.base_s = j.at("base_s").get<double>();
    c.trace.tail_s = j.at("tail_s").get<double>();
    c.trace.pareto_alpha = j.at("pareto_alpha").get<double>();
    c.trace.slow_factor = j.at("slow_factor").get<double>();
    c.trace.switch_at = j.at("switch_at").get<int>();
    c.trace_seed = j.at("trace_seed").get<std::uint64_t>();
    c.max_rounds = j.at("max_rounds").get<int>();
    c.target_loss = j.at("target_loss").get<double>();
    c.timed_grace_s = j.at("timed_grace_s").get<double>();
    c.checkpoint_every = j.at("checkpoint_every").get<int>();
    c.curvature_probe = j.value("curvature_probe", false);
  } catch (const json::exception& e) {
    return chorus::invalid_argument(source + ": not a training config: " + e.what());
  }
  if (auto s = validate(c); !s.ok()) return chorus::invalid_argument(source + ": " + s.message());
  return c;
}

Result<std::unique_ptr<chorus::sgd::Workload>> make_workload(const TrainingConfig& c) {
  if (c.workload == "digits") {
    auto data = chorus::sgd::read_digits_csv(chorus::sgd::default_digits_path());
    if (!data) return data.status();
    return chorus::sgd::make_softmax(std::move(*data), {c.l2});
  }
  chorus::sgd::LogisticParams p;
  p.dim = static_cast<std::size_t>(c.dim);
  p.samples = static_cast<std::size_t>(c.samples);
  p.l2 = c.l2;
  p.seed = c.data_seed;
  return chorus::sgd::make_logistic(p);
}

std::vector<double> trace_delays(const TrainingConfig& c) {
  auto params = c.trace;
  params.scenario = *chorus::sgd::parse_scenario(c.scenario);
  return chorus::sgd::service_times(params, c.n, c.max_rounds, c.trace_seed);
}

void batch_for(const TrainingConfig& c, std::size_t samples, int round, int worker,
               std::span<std::uint32_t> out) {
  // The round simulator's own draw (its rounds are 0-based): same seed, same batches, so a live
  // run follows the simulated one.
  chorus::sgd::draw_batch(c.trace_seed, round - 1, worker, samples, out);
}

Status write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return chorus::io_error("cannot create " + tmp + ": " + std::strerror(errno));
  const auto n = ::write(fd, text.data(), text.size());
  const bool ok = n == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return chorus::io_error("cannot write " + tmp + ": " + std::strerror(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return chorus::io_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status::ok_status();
}

}  // namespace quorum_training
