// quorum_worker: one worker of the live quorum training (README.md), a replica of a Chorus
// service.
//
//   quorum_worker --state DIR --id W [--endpoint tcp://H:P] [--inject KIND --inject-every R]
//
// Reads the run's keys, training.json and the PS's endpoint from DIR (waiting for the PS to write
// them), says HELO, and for each round computes its real gradient on its batch, then sleeps the
// scenario's trace delay for (W, round) — the simulator's delays, same seed — and sends it.
// Interrupt mode: a newer round arriving while it computes or sleeps makes it drop the stale
// work at once. Timed mode: it finishes and sends the late gradient (the PS times it), then takes
// the newest round. STOP: training ended, idle until SIGTERM.
//
// --inject KIND (bad-frame | wrong-dim | nan | past-round) sends, every R-th round, a faulty
// frame before the real gradient: the PS must reject and count it and go on.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "examples/quorum-training/frames.hpp"
#include "examples/quorum-training/key_folder.hpp"
#include "examples/quorum-training/training_config.hpp"
#include "runtime/transport/message_socket.hpp"

namespace qt = quorum_training;

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_term(int) {
  g_stop = 1;
}

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

int usage(const std::string& why) {
  std::cerr << "quorum_worker: " << why << "\n"
            << "usage: quorum_worker --state DIR --id W [--endpoint tcp://HOST:PORT]\n"
               "         [--inject bad-frame|wrong-dim|nan|past-round] [--inject-every R]\n";
  return 2;
}

class Worker {
 public:
  Worker(int id, qt::TrainingConfig config, std::unique_ptr<chorus::sgd::Workload> workload,
         std::unique_ptr<chorus::ClientSocket> socket, std::string inject, int inject_every)
      : id_(id),
        c_(std::move(config)),
        wl_(std::move(workload)),
        sock_(std::move(socket)),
        inject_(std::move(inject)),
        inject_every_(inject_every),
        trace_(qt::trace_delays(c_)),
        w_(wl_->dim()),
        g_(wl_->dim()),
        part_(wl_->dim()),
        w_prev_(c_.curvature_probe ? wl_->dim() : 0),
        g_prev_(c_.curvature_probe ? wl_->dim() : 0),
        batch_(static_cast<std::size_t>(c_.batch)) {}

  int run() {
    auto last_hello = SteadyClock::now() - std::chrono::seconds(1);
    while (g_stop == 0) {
      // Idle: say HELO now and then, so a PS that (re)started learns this worker; it answers
      // with the round in progress if this worker has not delivered it.
      if (!stopped_ && seconds_since(last_hello) > 0.25) {
        qt::encode_hello(out_, id_);
        (void)sock_->send(out_);
        last_hello = SteadyClock::now();
      }
      if (!wait_for_message(0.1)) return 1;
      if (has_work_) work();
    }
    return 0;
  }

 private:
  // Waits up to `seconds` for messages and takes them all; false on a socket error.
  bool wait_for_message(double seconds) {
    if (!sock_->readable()) {
      pollfd p{sock_->fd(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(seconds * 1000));
    }
    return drain();
  }

  // Takes every waiting message; a ROUND newer than the current work replaces it.
  bool drain() {
    for (;;) {
      auto got = sock_->receive(in_);
      if (!got) {
        std::cerr << "quorum_worker " << id_ << ": " << got.status().message() << std::endl;
        return false;
      }
      if (!*got) return true;
      const auto tag = qt::frame_tag(in_);
      if (tag == qt::kStopTag) {
        stopped_ = true;
        has_work_ = false;
        continue;
      }
      qt::RoundFrame f;
      if (tag != qt::kRoundTag || !qt::decode_round(in_, frame_storage_, f) ||
          f.weights.size() != w_.size()) {
        std::cerr << "quorum_worker " << id_ << ": ignored a malformed frame from the PS"
                  << std::endl;
        continue;
      }
      // A PS sends each round once per connection; a restarted PS may send again a round this
      // worker already delivered to its predecessor (that one died before checkpointing it).
      if (has_work_ && static_cast<int>(f.round) <= round_) {
        continue;
      }
      round_ = static_cast<int>(f.round);
      mode_ = f.mode;
      std::copy(f.weights.begin(), f.weights.end(), w_.begin());
      has_work_ = true;
      fresh_ = true;
      stopped_ = false;
    }
  }

  static constexpr double kNoCurvature = std::numeric_limits<double>::quiet_NaN();

  // The secant along this worker's step since the last gradient it finished, on this round's
  // batch: <g(w) - g(w'), w - w'> / ||w - w'||^2 (0 at least), the round simulator's probe. One
  // more gradient pass, at w'; NaN for the first gradient and a step of length 0. Then w' = w.
  double secant_curvature() {
    double curvature = kNoCurvature;
    if (have_prev_) {
      wl_->gradient(w_prev_, batch_, g_prev_);
      double dot = 0, step_sq = 0;
      for (std::size_t i = 0; i < w_.size(); ++i) {
        const double dw = w_[i] - w_prev_[i];
        dot += (g_[i] - g_prev_[i]) * dw;
        step_sq += dw * dw;
      }
      if (step_sq > 0) curvature = std::max(dot, 0.0) / step_sq;
    }
    std::copy(w_.begin(), w_.end(), w_prev_.begin());
    have_prev_ = true;
    return curvature;
  }

  // In interrupt mode: whether a newer round replaced the current work (drop it).
  bool superseded() {
    if (mode_ != qt::Mode::interrupt || !sock_->readable()) return false;
    fresh_ = false;
    if (!drain()) return false;
    return fresh_;
  }

  void work() {
    for (;;) {
      fresh_ = false;
      const int r = round_;
      const auto t0 = SteadyClock::now();
      qt::batch_for(c_, wl_->samples(), r, id_, batch_);
      // The gradient in chunks, checking between them for a newer round.
      constexpr std::size_t kChunk = 256;
      std::fill(g_.begin(), g_.end(), 0.0);
      bool dropped = false;
      for (std::size_t at = 0; at < batch_.size(); at += kChunk) {
        const auto len = std::min(kChunk, batch_.size() - at);
        wl_->gradient(w_, std::span<const std::uint32_t>(batch_).subspan(at, len), part_);
        const double share = static_cast<double>(len) / static_cast<double>(batch_.size());
        for (std::size_t i = 0; i < g_.size(); ++i) g_[i] += share * part_[i];
        if (superseded()) {
          dropped = true;
          break;
        }
      }
      if (dropped) continue;  // round_ and w_ now hold the newer round
      const double loss = wl_->batch_loss(w_, batch_);
      const double curvature = c_.curvature_probe ? secant_curvature() : kNoCurvature;
      const double compute_s = seconds_since(t0);
      // The trace delay, as a sleep that a newer round interrupts.
      const auto at = static_cast<std::size_t>(r - 1) * static_cast<std::size_t>(c_.n) +
                      static_cast<std::size_t>(id_);
      const double delay = at < trace_.size() ? trace_[at] : 0.0;
      const auto wake = t0 + std::chrono::duration_cast<SteadyClock::duration>(
                                 std::chrono::duration<double>(compute_s + delay));
      while (g_stop == 0) {
        const double left = std::chrono::duration<double>(wake - SteadyClock::now()).count();
        if (left <= 0) break;
        if (mode_ == qt::Mode::interrupt) {
          if (!sock_->readable()) {
            // ppoll: to the microsecond (poll's milliseconds would add ~0.5 ms per gradient).
            pollfd p{sock_->fd(), POLLIN, 0};
            const auto ns = static_cast<long>(left * 1e9);
            const timespec ts{ns / 1'000'000'000L, ns % 1'000'000'000L};
            ::ppoll(&p, 1, &ts, nullptr);
          }
          if (superseded()) {
            dropped = true;
            break;
          }
        } else {
          // Timed: newer rounds wait in the socket; slices of at most 50 ms so a SIGTERM during
          // a long (heavy-tail) delay is seen within the service's stop grace.
          std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.05)));
        }
      }
      if (g_stop != 0 || stopped_) return;
      if (dropped) continue;
      maybe_inject(r);
      qt::encode_grad(out_, static_cast<std::uint32_t>(r), id_, loss, compute_s, g_, curvature);
      (void)sock_->send(out_);
      // Timed mode: rounds that came meanwhile are in the socket; take the newest.
      has_work_ = false;
      if (!drain()) return;
      if (!has_work_) return;
    }
  }

  void maybe_inject(int r) {
    if (inject_.empty() || r % inject_every_ != 0) return;
    if (inject_ == "bad-frame") {
      out_ = "QGRD-not-a-frame";
    } else if (inject_ == "wrong-dim") {
      std::vector<double> shorter(g_.begin(), g_.end() - 1);
      qt::encode_grad(out_, static_cast<std::uint32_t>(r), id_, 0.5, 0, shorter);
    } else if (inject_ == "nan") {
      auto bad = g_;
      bad[bad.size() / 2] = std::nan("");
      qt::encode_grad(out_, static_cast<std::uint32_t>(r), id_, 0.5, 0, bad);
    } else {  // past-round: three rounds back, or round 0 (no round is numbered 0)
      qt::encode_grad(out_, static_cast<std::uint32_t>(r > 3 ? r - 3 : 0), id_, 0.5, 0, g_);
    }
    (void)sock_->send(out_);
  }

  int id_;
  qt::TrainingConfig c_;
  std::unique_ptr<chorus::sgd::Workload> wl_;
  std::unique_ptr<chorus::ClientSocket> sock_;
  std::string inject_;
  int inject_every_;
  std::vector<double> trace_;
  std::vector<double> w_, g_, part_, frame_storage_;
  std::vector<double> w_prev_, g_prev_;  // curvature_probe: the weights of the last gradient
  bool have_prev_ = false;
  std::vector<std::uint32_t> batch_;
  std::string in_, out_;
  int round_ = 0;
  qt::Mode mode_ = qt::Mode::interrupt;
  bool has_work_ = false, fresh_ = false, stopped_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string state, endpoint, inject;
  int id = -1, inject_every = 5;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return usage(args[i] + " needs a value");
    const auto& v = args[i + 1];
    if (args[i] == "--state")
      state = v;
    else if (args[i] == "--endpoint")
      endpoint = v;
    else if (args[i] == "--id")
      id = std::atoi(v.c_str());
    else if (args[i] == "--inject")
      inject = v;
    else if (args[i] == "--inject-every")
      inject_every = std::max(1, std::atoi(v.c_str()));
    else
      return usage("unknown flag " + args[i]);
  }
  if (state.empty() || id < 0) return usage("needs --state and --id (0..n-1)");
  if (!inject.empty() && inject != "bad-frame" && inject != "wrong-dim" && inject != "nan" &&
      inject != "past-round") {
    return usage("--inject is bad-frame, wrong-dim, nan or past-round, got '" + inject + "'");
  }
  struct sigaction sa {};
  sa.sa_handler = on_term;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);

  // The PS writes keys, then training.json, then endpoint: wait for the last (60 s at most).
  std::string config_text, endpoint_text;
  const auto until = SteadyClock::now() + std::chrono::seconds(60);
  while (!(read_text(state + "/endpoint", endpoint_text) &&
           read_text(state + "/training.json", config_text))) {
    if (g_stop != 0) return 0;
    if (SteadyClock::now() > until) {
      std::cerr << "quorum_worker " << id << ": no parameter server in " << state
                << " after 60 s (its endpoint file is missing)\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto config = qt::config_from_json(config_text, state + "/training.json");
  if (!config) {
    std::cerr << "quorum_worker " << id << ": " << config.status().message() << "\n";
    return 1;
  }
  if (id >= config->n) {
    return usage("--id " + std::to_string(id) + " is not below the run's n (" +
                 std::to_string(config->n) + ")");
  }
  auto keys = qt::read_worker_keys(state + "/keys");
  if (!keys) {
    std::cerr << "quorum_worker " << id << ": " << keys.status().message() << "\n";
    return 1;
  }
  auto workload = qt::make_workload(*config);
  if (!workload) {
    std::cerr << "quorum_worker " << id << ": " << workload.status().message() << "\n";
    return 1;
  }
  if (endpoint.empty()) {
    endpoint = endpoint_text.substr(0, endpoint_text.find('\n'));
  }
  auto sock = chorus::ClientSocket::connect(endpoint, keys->ps.public_key, keys->worker);
  if (!sock) {
    std::cerr << "quorum_worker " << id << ": " << sock.status().message() << "\n";
    return 1;
  }
  std::cout << "worker " << id << " connecting to " << endpoint << std::endl;
  Worker w(id, std::move(*config), std::move(*workload), std::move(*sock), inject, inject_every);
  return w.run();
}
