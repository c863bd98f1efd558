// quorum_ps: the parameter server of the live quorum training (README.md), a Chorus service.
//
//   quorum_ps serve --state DIR --port P [--host 127.0.0.1] [training flags]   the server
//   quorum_ps wait --state DIR [--timeout 600]        the training task: waits for the result
//
// `serve` hosts a quorum policy from the registry (chorus::PolicyRegistry::with_builtins(), so
// every policy of schedulers/quorum/ plugs in by name), sends each round's weights to the n
// workers, feeds the arrivals to the policy and closes the round at its word. On the first start
// it creates the run's keys and writes training.json; on every start it resumes from
// checkpoint.json when there is one. It writes result.json once the target loss or max rounds is
// reached, tells the workers to stop and then idles until SIGTERM (a service that exits while its
// users run would be restarted).
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "examples/quorum-training/checkpoint.hpp"
#include "examples/quorum-training/frames.hpp"
#include "examples/quorum-training/key_folder.hpp"
#include "examples/quorum-training/training_config.hpp"
#include "runtime/transport/message_socket.hpp"
#include "schedulers/policy_registry.hpp"

namespace qt = quorum_training;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_term(int) {
  g_stop = 1;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Clock {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int usage(const std::string& why) {
  std::cerr << "quorum_ps: " << why << "\n"
            << "usage: quorum_ps serve --state DIR --port P [--host H] [--n N] [--policy NAME]\n"
               "         [--option KEY=VALUE]... [--mode interrupt|timed] [--workload "
               "logistic|digits]\n"
               "         [--dim D] [--samples S] [--batch B] [--lr ETA] [--target-loss L]\n"
               "         [--max-rounds R] [--scenario S0..S6] [--base-s X] [--tail-s X]\n"
               "         [--slow-factor X] [--seed N] [--data-seed N] [--timed-grace-s X]\n"
               "         [--checkpoint-every R] [--curvature-probe 0|1]\n"
               "       quorum_ps wait --state DIR [--timeout SECONDS]\n";
  return 2;
}

// One worker as the PS knows it.
struct Slot {
  std::string peer;         // ROUTER routing id; empty until its HELO
  int sent_round = 0;       // the last round sent to this peer
  int delivered_round = 0;  // the newest round it delivered a gradient for
};

// A gradient of the open round received while timed mode still waits on the previous round's
// late ones (the policy has not begun the round yet): replayed in order afterwards.
struct Buffered {
  int worker = 0;
  double time = 0;
  double grad_sq_norm = 0;
  double curvature = chorus::kNoStat;
};

class ParameterServer {
 public:
  ParameterServer(qt::TrainingConfig config, std::string state,
                  std::unique_ptr<chorus::sgd::Workload> workload,
                  std::unique_ptr<chorus::QuorumPolicy> policy,
                  std::unique_ptr<chorus::ServerSocket> socket)
      : c_(std::move(config)),
        state_(std::move(state)),
        wl_(std::move(workload)),
        policy_(std::move(policy)),
        sock_(std::move(socket)),
        dim_(wl_->dim()),
        slots_(static_cast<std::size_t>(c_.n)),
        w_(dim_),
        sum_(dim_),
        grads_(static_cast<std::size_t>(c_.n) * dim_),
        arrivals_(static_cast<std::size_t>(c_.n), chorus::kNever),
        batch_loss_(static_cast<std::size_t>(c_.n), 0.0),
        used_(static_cast<std::size_t>(c_.n), false),
        trace_(qt::trace_delays(c_)) {
    cp_.rejected.assign(qt::kRejectionKinds, 0);
    buffered_.reserve(static_cast<std::size_t>(c_.n));
    compute_s_.reserve(static_cast<std::size_t>(c_.n) * static_cast<std::size_t>(c_.max_rounds));
  }

  chorus::Status resume() {
    wl_->initial(w_);
    auto cp = qt::read_checkpoint(state_ + "/checkpoint.json", state_ + "/rounds.jsonl", dim_);
    if (cp) {
      cp_ = std::move(*cp);
      cp_.rejected.resize(qt::kRejectionKinds, 0);
      w_ = cp_.weights;
      cp_.resumed_at.push_back(cp_.round_done + 1);
      std::cout << "resuming at round " << cp_.round_done + 1 << " from the checkpoint"
                << std::endl;
    } else if (cp.status().code() != chorus::ErrorCode::not_found) {
      return cp.status();
    }
    done_ = cp_.round_done >= c_.max_rounds ||
            (!cp_.rounds.empty() && c_.target_loss > 0 && cp_.rounds.back().loss <= c_.target_loss);
    return chorus::Status::ok_status();
  }

  int run() {
    std::string peer, payload, user;
    while (g_stop == 0) {
      double wait_s = 0.1;
      if (open_ && policy_begun_) wait_s = std::min(wait_s, policy_->deadline() - clock_.now());
      if (pending_) wait_s = std::min(wait_s, pending_closed_at_ + c_.timed_grace_s - clock_.now());
      pollfd p{sock_->fd(), POLLIN, 0};
      if (!sock_->readable()) {
        ::poll(&p, 1, std::clamp(static_cast<int>(std::ceil(wait_s * 1000)), 0, 100));
      }
      for (;;) {
        auto got = sock_->receive(peer, payload, &user);
        if (!got) {
          std::cerr << "quorum_ps: receive: " << got.status().message() << std::endl;
          return 1;
        }
        if (!*got) break;
        handle(peer, payload);
      }
      const double now = clock_.now();
      if (pending_ && now >= pending_closed_at_ + c_.timed_grace_s) resolve_pending();
      if (open_ && policy_begun_ && received_ > 0 && now >= policy_->deadline() &&
          policy_->on_tick(now) == chorus::QuorumVerdict::close) {
        close_round(now);
      }
      if (failed_) return 1;
    }
    std::cout << "stopping (SIGTERM)" << std::endl;
    return 0;
  }

 private:
  void handle(const std::string& peer, const std::string& payload) {
    const auto tag = qt::frame_tag(payload);
    if (tag == qt::kHelloTag) {
      std::int32_t w = -1;
      if (!qt::decode_hello(payload, w) || w < 0 || w >= c_.n) {
        reject(qt::Rejection::bad_worker);
        return;
      }
      on_hello(peer, w);
      return;
    }
    qt::GradFrame g;
    if (tag != qt::kGradTag || !qt::decode_grad(payload, frame_storage_, g)) {
      reject(qt::Rejection::bad_frame);
      return;
    }
    on_grad(peer, g);
  }

  void on_hello(const std::string& peer, int w) {
    auto& s = slots_[static_cast<std::size_t>(w)];
    if (s.peer != peer) {
      s.peer = peer;
      s.sent_round = 0;
    }
    if (done_) {
      qt::encode_stop(out_);
      (void)sock_->send(peer, out_);
      return;
    }
    if (!started_) {
      const bool all =
          std::all_of(slots_.begin(), slots_.end(), [](const Slot& x) { return !x.peer.empty(); });
      if (all) {
        started_ = true;
        if (cp_.train_start_unix == 0) cp_.train_start_unix = unix_now();
        begin_round(cp_.round_done + 1);
      }
      return;
    }
    if (open_ && s.sent_round != round_ && s.delivered_round < round_) send_round(w);
  }

  void on_grad(const std::string& peer, const qt::GradFrame& g) {
    const double now = clock_.now();
    if (g.worker < 0 || g.worker >= c_.n ||
        slots_[static_cast<std::size_t>(g.worker)].peer != peer) {
      reject(qt::Rejection::bad_worker);
      return;
    }
    if (g.dim != dim_) {
      reject(qt::Rejection::wrong_dim);
      return;
    }
    bool finite = std::isfinite(g.batch_loss);
    for (double x : g.gradient) finite = finite && std::isfinite(x);
    if (!finite) {
      reject(qt::Rejection::non_finite);
      return;
    }
    const auto wi = static_cast<std::size_t>(g.worker);
    auto& slot = slots_[wi];
    const int r = static_cast<int>(g.round);
    if (r > round_ || !started_) {
      reject(qt::Rejection::future_round);
      return;
    }
    if (r < round_) {
      if (pending_ && r == pending_round_ && pending_arrivals_[wi] == chorus::kNever) {
        pending_arrivals_[wi] = now;  // timed: its arrival is known, its gradient unused
        slot.delivered_round = std::max(slot.delivered_round, r);
        ++cp_.late_timed;
        maybe_resolve_pending();
      } else if (r == round_ - 1 && slot.delivered_round < r) {
        ++cp_.late_dropped;  // interrupt mode: sent before the worker saw the next round
        slot.delivered_round = r;
      } else {
        reject(qt::Rejection::past_round);
      }
      return;
    }
    if (slot.delivered_round >= r || !open_) {
      reject(qt::Rejection::duplicate);
      return;
    }
    slot.delivered_round = r;
    compute_s_.push_back(g.compute_s);
    if (const double c = curvature_of(g); !std::isnan(c)) curvatures_.push_back(c);
    batch_loss_[wi] = g.batch_loss;
    std::copy(g.gradient.begin(), g.gradient.end(), grads_.begin() + wi * dim_);
    double sq = 0;
    for (double x : g.gradient) sq += x * x;
    arrivals_[wi] = now;
    if (!policy_begun_) {
      buffered_.push_back({g.worker, now, sq, curvature_of(g)});
      maybe_resolve_pending();  // this worker moving on may be what the previous round waited for
      return;
    }
    if (accept(g.worker, now, sq, curvature_of(g)) == chorus::QuorumVerdict::close ||
        received_ == c_.n) {
      close_round(now);
    }
  }

  // Aggregates worker w's gradient (already in grads_) and asks the policy.
  // A worker's curvature probe as the policies take it: a finite value at least 0, else none.
  static double curvature_of(const qt::GradFrame& g) {
    return std::isfinite(g.curvature) && g.curvature >= 0 ? g.curvature : chorus::kNoStat;
  }

  chorus::QuorumVerdict accept(int w, double time, double grad_sq_norm, double curvature) {
    const auto wi = static_cast<std::size_t>(w);
    const double* g = grads_.data() + wi * dim_;
    double sum_sq = 0;
    for (std::size_t i = 0; i < dim_; ++i) {
      sum_[i] += g[i];
      sum_sq += sum_[i] * sum_[i];
    }
    used_[wi] = true;
    ++received_;
    chorus::Arrival a;
    a.worker = w;
    a.time = time;
    a.received = received_;
    a.grad_sq_norm = grad_sq_norm;
    a.sum_sq_norm = sum_sq;
    a.curvature = curvature;
    return policy_->on_arrival(a);
  }

  void reject(qt::Rejection why) { ++cp_.rejected[static_cast<std::size_t>(why)]; }

  double lr(int round) const {
    auto params = c_.trace;
    params.scenario = *chorus::sgd::parse_scenario(c_.scenario);
    return chorus::sgd::learning_rate_at(params, c_.learning_rate, round - 1, c_.max_rounds);
  }

  void send_round(int w) {
    auto& s = slots_[static_cast<std::size_t>(w)];
    if (s.peer.empty()) return;
    if (sock_->send(s.peer, round_frame_).ok()) s.sent_round = round_;
  }

  void begin_round(int r) {
    round_ = r;
    open_ = true;
    received_ = 0;
    std::fill(sum_.begin(), sum_.end(), 0.0);
    std::fill(arrivals_.begin(), arrivals_.end(), chorus::kNever);
    std::fill(used_.begin(), used_.end(), false);
    buffered_.clear();
    qt::RoundFrame f;
    f.round = static_cast<std::uint32_t>(r);
    f.mode = c_.mode;
    f.batch = static_cast<std::uint32_t>(c_.batch);
    f.learning_rate = lr(r);
    f.weights = w_;
    qt::encode_round(round_frame_, f);
    round_start_ = clock_.now();
    round_start_wall_ = unix_now() - cp_.train_start_unix;
    for (int w = 0; w < c_.n; ++w) send_round(w);
    policy_begun_ = !pending_;
    if (policy_begun_) begin_policy();
  }

  void begin_policy() {
    chorus::RoundStart s;
    s.round = round_;
    s.n = c_.n;
    s.time = round_start_;
    s.learning_rate = lr(round_);
    s.batch = c_.batch;
    // As in the simulator: the mean batch loss of the previous round's used gradients (what a
    // PS has without a full pass; the full loss is this program's metric only).
    s.loss = prev_batch_loss_;
    policy_->begin(s);
    policy_begun_ = true;
  }

  void close_round(double now) {
    open_ = false;
    double loss_sum = 0;
    for (std::size_t w = 0; w < used_.size(); ++w) loss_sum += used_[w] ? batch_loss_[w] : 0.0;
    prev_batch_loss_ = loss_sum / received_;
    const double step = lr(round_) / received_;
    for (std::size_t i = 0; i < dim_; ++i) w_[i] -= step * sum_[i];
    qt::RoundRecord rec;
    rec.round = round_;
    rec.k = received_;
    rec.target = policy_->target();
    rec.start_s = round_start_wall_;
    rec.duration_s = now - round_start_;
    rec.loss = wl_->loss(w_);
    rec.used = used_;
    rec.arrivals.resize(arrivals_.size());
    for (std::size_t i = 0; i < arrivals_.size(); ++i) {
      rec.arrivals[i] = arrivals_[i] == chorus::kNever ? -1 : arrivals_[i] - round_start_;
    }
    if (!std::isfinite(rec.loss)) {
      std::cerr << "quorum_ps: the loss diverged at round " << round_ << " (lower --lr)"
                << std::endl;
      failed_ = true;
      return;
    }
    if (auto s = qt::append_round(state_ + "/rounds.jsonl", rec); !s.ok()) {
      std::cerr << "quorum_ps: " << s.message() << std::endl;
    }
    cp_.rounds.push_back(std::move(rec));
    cp_.round_done = round_;
    cp_.weights = w_;
    const bool reached = c_.target_loss > 0 && cp_.rounds.back().loss <= c_.target_loss;
    done_ = reached || round_ >= c_.max_rounds;

    if (c_.mode == qt::Mode::timed) {
      // End the policy's round once the late ones are in (resolve_pending), so its arrival
      // statistics are uncensored; the next round's arrivals wait in buffered_ meanwhile.
      pending_ = true;
      pending_round_ = round_;
      pending_start_ = round_start_;
      pending_closed_at_ = now;
      pending_used_ = received_;
      pending_arrivals_ = arrivals_;
    } else {
      end_policy(round_, round_start_, now, received_, arrivals_, false);
    }
    if (done_ || round_ % c_.checkpoint_every == 0) {
      if (auto s = qt::write_checkpoint(state_ + "/checkpoint.json", cp_); !s.ok()) {
        std::cerr << "quorum_ps: " << s.message() << std::endl;
      }
    }
    if (done_) {
      finish(reached);
      return;
    }
    begin_round(round_ + 1);
    maybe_resolve_pending();
  }

  void end_policy(int round, double start, double closed_at, int used,
                  const std::vector<double>& arrivals, bool timed) {
    chorus::RoundEnd e;
    e.round = round;
    e.start = start;
    e.closed_at = closed_at;
    e.used = used;
    e.arrivals = arrivals;
    e.timed = timed;
    policy_->end(e);
  }

  // Timed mode: the previous round ends for the policy when every worker delivered it (or a
  // newer round: it skipped to the latest work) or the grace window passed.
  void maybe_resolve_pending() {
    if (!pending_) return;
    for (std::size_t w = 0; w < slots_.size(); ++w) {
      if (pending_arrivals_[w] == chorus::kNever && slots_[w].delivered_round <= pending_round_) {
        return;
      }
    }
    resolve_pending();
  }

  void resolve_pending() {
    if (!pending_) return;
    pending_ = false;
    for (std::size_t w = 0; w < pending_arrivals_.size(); ++w) {
      auto& rec = cp_.rounds.back();
      if (rec.round == pending_round_ && pending_arrivals_[w] != chorus::kNever) {
        // (In memory and result.json; rounds.jsonl keeps what was known at the close.)
        rec.arrivals[w] = pending_arrivals_[w] - pending_start_;
      }
    }
    end_policy(pending_round_, pending_start_, pending_closed_at_, pending_used_, pending_arrivals_,
               true);
    if (!open_ || policy_begun_) return;
    begin_policy();
    // Replay what arrived meanwhile, in arrival order (buffered_ is in that order).
    for (std::size_t i = 0; i < buffered_.size(); ++i) {
      const auto& b = buffered_[i];
      if (accept(b.worker, b.time, b.grad_sq_norm, b.curvature) == chorus::QuorumVerdict::close ||
          received_ == c_.n) {
        // The ones after the close point are late arrivals of this round, timed but unused.
        for (std::size_t j = i + 1; j < buffered_.size(); ++j) {
          used_[static_cast<std::size_t>(buffered_[j].worker)] = false;
        }
        close_round(std::max(b.time, clock_.now()));
        return;
      }
    }
  }

  void finish(bool reached) {
    nlohmann::ordered_json j;
    const auto& last = cp_.rounds.back();
    j["reached_target"] = reached;
    j["rounds"] = cp_.round_done;
    j["final_loss"] = last.loss;
    j["target_loss"] = c_.target_loss;
    j["time_to_target_s"] = reached ? nlohmann::ordered_json(last.start_s + last.duration_s)
                                    : nlohmann::ordered_json(nullptr);
    j["train_time_s"] = unix_now() - cp_.train_start_unix;
    j["policy"] = c_.policy;
    j["policy_options"] = c_.policy_options;
    j["mode"] = c_.mode == qt::Mode::timed ? "timed" : "interrupt";
    j["n"] = c_.n;
    j["workload"] = wl_->name();
    j["scenario"] = c_.scenario;
    j["trace_seed"] = c_.trace_seed;
    nlohmann::ordered_json rejected;
    std::int64_t total = 0;
    for (int i = 0; i < qt::kRejectionKinds; ++i) {
      rejected[std::string(qt::rejection_name(static_cast<qt::Rejection>(i)))] =
          cp_.rejected[static_cast<std::size_t>(i)];
      total += cp_.rejected[static_cast<std::size_t>(i)];
    }
    j["rejected_total"] = total;
    j["rejected"] = rejected;
    j["late_dropped"] = cp_.late_dropped;
    j["late_timed"] = cp_.late_timed;
    j["resumed_at"] = cp_.resumed_at;
    // Overheads against the trace: what an arrival took beyond its scenario delay (compute,
    // transport, the PS's own work), and the close-to-next-broadcast gap. The simulator takes
    // the first as its per-round overhead (bench/dbw/live_vs_sim.py).
    std::vector<double> over, ks, durations, gaps;
    for (std::size_t i = 1; i < cp_.rounds.size(); ++i) {
      const auto& a = cp_.rounds[i - 1];
      if (cp_.rounds[i].round == a.round + 1) {
        gaps.push_back(cp_.rounds[i].start_s - a.start_s - a.duration_s);
      }
    }
    std::vector<double> worker_sum(static_cast<std::size_t>(c_.n), 0.0);
    std::vector<int> worker_count(static_cast<std::size_t>(c_.n), 0), worker_used(worker_count);
    for (const auto& r : cp_.rounds) {
      ks.push_back(r.k);
      durations.push_back(r.duration_s);
      for (std::size_t w = 0; w < r.arrivals.size(); ++w) {
        if (r.used[w]) ++worker_used[w];
        if (r.arrivals[w] < 0) continue;
        worker_sum[w] += r.arrivals[w];
        ++worker_count[w];
        const auto at = static_cast<std::size_t>(r.round - 1) * static_cast<std::size_t>(c_.n) + w;
        if (at < trace_.size() && r.used[w]) over.push_back(r.arrivals[w] - trace_[at]);
      }
    }
    j["median_k"] = median(ks);
    j["median_round_s"] = median(durations);
    j["median_arrival_overhead_s"] = median(over);
    j["median_compute_s"] = median(compute_s_);
    // The workers' curvature probes (curvature_probe), null when they sent none.
    j["median_curvature"] = curvatures_.empty() ? nlohmann::ordered_json()
                                                : nlohmann::ordered_json(median(curvatures_));
    // Close to next broadcast: the update, the loss (the metric) and the checkpoint.
    j["median_gap_s"] = median(gaps);
    nlohmann::ordered_json workers = nlohmann::ordered_json::array();
    for (int w = 0; w < c_.n; ++w) {
      const auto wi = static_cast<std::size_t>(w);
      workers.push_back(
          {{"worker", w},
           {"used", worker_used[wi]},
           {"arrived", worker_count[wi]},
           {"mean_arrival_s", worker_count[wi] > 0 ? worker_sum[wi] / worker_count[wi] : 0.0}});
    }
    j["workers"] = workers;
    j["per_round"] = nlohmann::ordered_json::parse(qt::rounds_json(cp_.rounds));
    if (auto s = qt::write_atomically(state_ + "/result.json", j.dump(2) + "\n"); !s.ok()) {
      std::cerr << "quorum_ps: " << s.message() << std::endl;
      failed_ = true;
    }
    std::cout << "training ended: " << cp_.round_done << " rounds, loss " << last.loss
              << (reached ? " (target reached)" : " (max rounds)") << std::endl;
    qt::encode_stop(out_);
    for (const auto& s : slots_) {
      if (!s.peer.empty()) (void)sock_->send(s.peer, out_);
    }
  }

  qt::TrainingConfig c_;
  std::string state_;
  std::unique_ptr<chorus::sgd::Workload> wl_;
  std::unique_ptr<chorus::QuorumPolicy> policy_;
  std::unique_ptr<chorus::ServerSocket> sock_;
  std::size_t dim_;
  Clock clock_;
  std::vector<Slot> slots_;
  std::vector<double> w_, sum_, grads_, arrivals_, batch_loss_;
  double prev_batch_loss_ = chorus::kNoStat;
  std::vector<bool> used_;
  std::vector<double> trace_;
  std::vector<double> frame_storage_;
  std::vector<Buffered> buffered_;
  std::vector<double> compute_s_;   // the workers' reported compute per gradient (this start only)
  std::vector<double> curvatures_;  // the probes received (curvature_probe)
  std::string round_frame_, out_;
  qt::Checkpoint cp_;
  bool started_ = false, open_ = false, policy_begun_ = false, done_ = false, failed_ = false;
  int round_ = 0, received_ = 0;
  double round_start_ = 0, round_start_wall_ = 0;
  bool pending_ = false;
  int pending_round_ = 0, pending_used_ = 0;
  double pending_start_ = 0, pending_closed_at_ = 0;
  std::vector<double> pending_arrivals_;
};

bool parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(out);
}

int serve(const std::vector<std::string>& args) {
  qt::TrainingConfig c;
  std::string state, host = "127.0.0.1", port;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size()) return usage(flag + " needs a value");
    const std::string v = args[++i];
    double x = 0;
    const bool num = parse_number(v, x);
    auto need_num = [&]() {
      if (!num) std::cerr << "quorum_ps: " << flag << " takes a number, got '" << v << "'\n";
      return num;
    };
    if (flag == "--state")
      state = v;
    else if (flag == "--host")
      host = v;
    else if (flag == "--port")
      port = v;
    else if (flag == "--policy")
      c.policy = v;
    else if (flag == "--workload")
      c.workload = v;
    else if (flag == "--scenario")
      c.scenario = v;
    else if (flag == "--mode") {
      if (v != "interrupt" && v != "timed")
        return usage("--mode is interrupt or timed, got '" + v + "'");
      c.mode = v == "timed" ? qt::Mode::timed : qt::Mode::interrupt;
    } else if (flag == "--option") {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return usage("--option takes KEY=VALUE, got '" + v + "'");
      c.policy_options[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (!need_num()) {
      return 2;
    } else if (flag == "--n")
      c.n = static_cast<int>(x);
    else if (flag == "--dim")
      c.dim = static_cast<int>(x);
    else if (flag == "--samples")
      c.samples = static_cast<int>(x);
    else if (flag == "--batch")
      c.batch = static_cast<int>(x);
    else if (flag == "--lr")
      c.learning_rate = x;
    else if (flag == "--l2")
      c.l2 = x;
    else if (flag == "--target-loss")
      c.target_loss = x;
    else if (flag == "--max-rounds")
      c.max_rounds = static_cast<int>(x);
    else if (flag == "--base-s")
      c.trace.base_s = x;
    else if (flag == "--tail-s")
      c.trace.tail_s = x;
    else if (flag == "--slow-factor")
      c.trace.slow_factor = x;
    else if (flag == "--switch-at")
      c.trace.switch_at = static_cast<int>(x);
    else if (flag == "--seed")
      c.trace_seed = static_cast<std::uint64_t>(x);
    else if (flag == "--data-seed")
      c.data_seed = static_cast<std::uint64_t>(x);
    else if (flag == "--timed-grace-s")
      c.timed_grace_s = x;
    else if (flag == "--checkpoint-every")
      c.checkpoint_every = static_cast<int>(x);
    else if (flag == "--curvature-probe")
      c.curvature_probe = x != 0;
    else
      return usage("unknown flag " + flag);
  }
  if (state.empty() || port.empty()) return usage("serve needs --state and --port");
  if (auto s = qt::validate(c); !s.ok()) return usage(s.message());

  chorus::PolicyOptions options;
  for (const auto& [key, value] : c.policy_options) {
    chorus::OptionEntry e;
    e.key = key;
    e.key_at.source = "--option";
    e.value.text = value;
    e.value.at.source = "--option " + key;
    options.set(std::move(e));
  }
  chorus::OptionOrigin at;
  at.source = "--policy";
  auto policy = chorus::PolicyRegistry::with_builtins().make_quorum(c.policy, options, {}, at);
  if (!policy) {
    std::cerr << "quorum_ps: " << policy.status().message() << "\n";
    return 2;
  }
  // The quorum vocabulary (`quorum: {n, k}`, backup workers b): a k above n, or b of n or
  // more, would be clamped by the policy into something the user did not ask for. Refused.
  for (const auto& [key, limit] : {std::pair<std::string, int>{"k", c.n}, {"b", c.n - 1}}) {
    double v = 0;
    if (auto it = c.policy_options.find(key);
        it != c.policy_options.end() && parse_number(it->second, v) && v > limit) {
      std::cerr << "quorum_ps: --option " << key << "=" << it->second << " with --n " << c.n
                << " workers: " << key << " must be at most " << limit << "\n";
      return 2;
    }
  }
  auto workload = qt::make_workload(c);
  if (!workload) {
    std::cerr << "quorum_ps: " << workload.status().message() << "\n";
    return 2;
  }
  if (c.workload == "digits") c.dim = static_cast<int>((*workload)->dim());

  std::error_code ec;
  std::filesystem::create_directories(state, ec);
  if (ec) {
    std::cerr << "quorum_ps: cannot create " << state << ": " << ec.message() << "\n";
    return 1;
  }
  auto keys = qt::load_or_create_keys(state + "/keys");
  if (!keys) {
    std::cerr << "quorum_ps: " << keys.status().message() << "\n";
    return 1;
  }
  chorus::ServerSocketOptions so;
  so.endpoint = "tcp://" + host + ":" + port;
  so.keys = keys->ps;
  so.allowed_peers = {{keys->worker.public_key, "worker"}};
  auto sock = chorus::ServerSocket::bind(so);
  if (!sock) {
    std::cerr << "quorum_ps: " << sock.status().message() << "\n";
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_term;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  for (const auto& [file, text] :
       {std::pair<std::string, std::string>{"training.json", qt::to_json(c)},
        {"ps.pid", std::to_string(::getpid()) + "\n"},
        {"endpoint", (*sock)->endpoint() + "\n"}}) {
    if (auto s = qt::write_atomically(state + "/" + file, text); !s.ok()) {
      std::cerr << "quorum_ps: " << s.message() << "\n";
      return 1;
    }
  }
  ParameterServer ps(c, state, std::move(*workload), std::move(*policy), std::move(*sock));
  if (auto s = ps.resume(); !s.ok()) {
    std::cerr << "quorum_ps: " << s.message() << "\n";
    return 1;
  }
  std::cout << "listening on " << so.endpoint << " (policy " << c.policy << ", n " << c.n << ")"
            << std::endl;
  return ps.run();
}

// The training task: returns when result.json appears (0), or after the timeout (1).
int wait_result(const std::vector<std::string>& args) {
  std::string state;
  double timeout = 600;
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--state")
      state = args[i + 1];
    else if (args[i] == "--timeout" && parse_number(args[i + 1], timeout))
      continue;
    else
      return usage("wait: unknown or bad flag " + args[i]);
  }
  if (state.empty()) return usage("wait needs --state");
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  const std::string path = state + "/result.json";
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(path);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      try {
        const auto j = nlohmann::json::parse(text.str());
        std::cout << "rounds " << j.at("rounds") << ", final loss " << j.at("final_loss")
                  << ", reached target " << j.at("reached_target") << ", rejected "
                  << j.at("rejected_total") << ", restarts resumed at " << j.at("resumed_at")
                  << std::endl;
        return 0;
      } catch (const nlohmann::json::exception& e) {
        std::cerr << "quorum_ps wait: " << path << " is not a result: " << e.what() << "\n";
        return 1;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "quorum_ps wait: no " << path << " after " << timeout << " s\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage("no command");
  const std::string cmd = args.front();
  args.erase(args.begin());
  if (cmd == "serve") return serve(args);
  if (cmd == "wait") return wait_result(args);
  return usage("unknown command '" + cmd + "'");
}
