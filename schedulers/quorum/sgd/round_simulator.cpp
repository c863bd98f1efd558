// The round simulator (round_simulator.hpp): the event order of one round, the gradient sums the
// policy's statistics come from, and the target loss's optimum.
#include "schedulers/quorum/sgd/round_simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <string>

namespace chorus::sgd {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double sq_norm(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

// Times the policy's part of the round, and only it.
class PolicyTimer {
 public:
  template <typename F>
  auto operator()(F&& f) {
    const auto t0 = Clock::now();
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      add(t0);
    } else {
      auto r = f();
      add(t0);
      return r;
    }
  }
  double seconds = 0;
  std::int64_t calls = 0;

 private:
  void add(Clock::time_point t0) {
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    ++calls;
  }
};

Status validate(const Workload& workload, const SimConfig& c) {
  if (c.n < 1)
    return invalid_argument("the number of workers must be at least 1 (got " + std::to_string(c.n) +
                            ")");
  if (c.batch < 1)
    return invalid_argument("the batch must be at least 1 sample (got " + std::to_string(c.batch) +
                            ")");
  if (!(c.learning_rate > 0) || !std::isfinite(c.learning_rate)) {
    return invalid_argument("the learning rate must be a positive number");
  }
  if (c.max_iterations < 1) return invalid_argument("max iterations must be at least 1");
  if (!(c.overhead_s >= 0) || !std::isfinite(c.overhead_s)) {
    return invalid_argument("the per-round overhead must be a finite number of seconds >= 0");
  }
  if (workload.samples() == 0 || workload.dim() == 0) {
    return invalid_argument("the workload has no samples or no parameters");
  }
  return {};
}

}  // namespace

void draw_batch(std::uint64_t seed, int round, int worker, std::size_t samples,
                std::span<std::uint32_t> out) {
  const std::uint64_t base =
      mix(mix(seed ^ 0x5eed'ba7c'4000'0000ULL) ^
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(round)) << 20) ^
          static_cast<std::uint64_t>(static_cast<std::uint32_t>(worker)));
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j] = static_cast<std::uint32_t>(mix(base + j) % samples);
  }
}

Result<SimResult> simulate_rounds(const Workload& workload, QuorumPolicy& policy,
                                  const SimConfig& c) {
  if (Status s = validate(workload, c); !s.ok()) return s;
  const auto n = static_cast<std::size_t>(c.n);
  const std::size_t dim = workload.dim();
  const int iterations = c.max_iterations;

  // Everything allocated here, before the first round.
  const std::vector<double> service = service_times(c.scenario, c.n, iterations, c.seed);
  std::vector<double> w(dim), w_prev(dim), g(dim), g_prev(dim), sum(dim);
  std::vector<std::uint32_t> batch(static_cast<std::size_t>(c.batch));
  std::vector<double> arrive(n), free_at(n, 0.0), reported(n);
  std::vector<int> order(n);
  workload.initial(w);
  w_prev = w;

  SimResult result;
  if (c.trace) result.trace.reserve(static_cast<std::size_t>(iterations));
  PolicyTimer timed_call;
  double start = 0;            // T_t
  double prev_loss = kNoStat;  // the mean batch loss of the previous round's received results
  bool have_prev_w = false;
  double k_total = 0;

  for (int t = 0; t < iterations; ++t) {
    const double eta = learning_rate_at(c.scenario, c.learning_rate, t, iterations);
    for (std::size_t i = 0; i < n; ++i) {
      const double begin_at = c.mode == RoundMode::timed ? std::max(start, free_at[i]) : start;
      arrive[i] = begin_at + service[static_cast<std::size_t>(t) * n + i];
    }
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const double ta = arrive[static_cast<std::size_t>(a)];
      const double tb = arrive[static_cast<std::size_t>(b)];
      return ta < tb || (ta == tb && a < b);
    });

    result.first_arrivals_s += arrive[static_cast<std::size_t>(order[0])] - start + c.overhead_s;
    RoundStart rs;
    rs.round = t + 1;
    rs.n = c.n;
    rs.time = start;
    rs.learning_rate = eta;
    rs.batch = c.batch;
    rs.loss = prev_loss;
    timed_call([&] { policy.begin(rs); });

    std::fill(sum.begin(), sum.end(), 0.0);
    const double step_norm = have_prev_w ? [&] {
      double s = 0;
      for (std::size_t j = 0; j < dim; ++j) s += (w[j] - w_prev[j]) * (w[j] - w_prev[j]);
      return std::sqrt(s);
    }()
                                         : 0.0;
    int received = 0;
    double batch_loss_sum = 0;
    double now = start;
    double closed_at = start;
    bool closed = false;
    for (std::size_t r = 0; r < n && !closed; ++r) {
      const auto i = static_cast<std::size_t>(order[r]);
      // Ticks the policy asked for before this arrival. A tick that leaves the deadline where
      // it was is not repeated before the next arrival (a `close` with no result is a wait).
      for (;;) {
        const double d = policy.deadline();
        if (!(d < arrive[i]) || std::isinf(d)) break;
        const double at = std::max(d, now);
        now = at;
        const QuorumVerdict v = timed_call([&] { return policy.on_tick(at); });
        if (v == QuorumVerdict::close && received > 0) {
          closed = true;
          closed_at = at;
          break;
        }
        if (!(policy.deadline() > at)) break;
      }
      if (closed) break;
      now = arrive[i];
      draw_batch(c.seed, t, static_cast<int>(i), workload.samples(), batch);
      workload.gradient(w, batch, g);
      batch_loss_sum += workload.batch_loss(w, batch);
      for (std::size_t j = 0; j < dim; ++j) sum[j] += g[j];
      ++received;
      Arrival a;
      a.worker = static_cast<int>(i);
      a.time = now;
      a.received = received;
      a.grad_sq_norm = sq_norm(g);
      a.sum_sq_norm = sq_norm(sum);
      if (c.curvature_probe && have_prev_w && step_norm > 0) {
        workload.gradient(w_prev, batch, g_prev);
        double dot = 0;
        for (std::size_t j = 0; j < dim; ++j) dot += (g[j] - g_prev[j]) * (w[j] - w_prev[j]);
        a.curvature = std::max(dot, 0.0) / (step_norm * step_norm);
      }
      const QuorumVerdict v = timed_call([&] { return policy.on_arrival(a); });
      if (v == QuorumVerdict::close || received == c.n) {
        closed = true;
        closed_at = now;
      }
    }

    // What the policy learns at the end: the received, and in timed mode the late ones too.
    for (std::size_t i = 0; i < n; ++i) {
      const bool in_time = arrive[i] <= closed_at;
      reported[i] = (in_time || c.mode == RoundMode::timed) ? arrive[i] : kNever;
      free_at[i] = c.mode == RoundMode::timed ? std::max(arrive[i], closed_at) : closed_at;
    }
    // Results tied with the close but not fed before it are censored like the later ones.
    if (c.mode == RoundMode::interrupt) {
      int seen = 0;
      for (std::size_t r = 0; r < n; ++r) {
        const auto i = static_cast<std::size_t>(order[r]);
        if (seen >= received) reported[i] = kNever;
        ++seen;
      }
    }
    RoundEnd re;
    re.round = t + 1;
    re.start = start;
    re.closed_at = closed_at;
    re.used = received;
    re.arrivals = reported;
    re.timed = c.mode == RoundMode::timed;
    timed_call([&] { policy.end(re); });

    // The update, then the metric (at no simulated time).
    w_prev = w;
    have_prev_w = true;
    const double scale = eta / static_cast<double>(received);
    for (std::size_t j = 0; j < dim; ++j) w[j] -= scale * sum[j];
    prev_loss = batch_loss_sum / static_cast<double>(received);
    k_total += received;
    start = closed_at + c.overhead_s;
    const double loss = workload.loss(w);
    result.iterations = t + 1;
    result.end_time = start;
    result.final_loss = loss;
    if (c.trace) result.trace.push_back({t + 1, start, loss, received});
    if (!result.reached && !std::isnan(c.target_loss) && loss <= c.target_loss) {
      result.reached = true;
      result.time_to_target = start;
      result.rounds_to_target = t + 1;
      break;
    }
    if (!std::isfinite(loss)) break;  // diverged: the step is too large for this k
    if (start >= c.max_time_s) break;
  }
  result.mean_k = result.iterations > 0 ? k_total / result.iterations : 0;
  result.policy_seconds = timed_call.seconds;
  result.policy_calls = timed_call.calls;
  return result;
}

namespace {

// F*: accelerated gradient descent with backtracking (FISTA without a prox) and a restart when
// the loss goes up, on the full batch, from w0. Stops when ||grad||^2 < 1e-13 (for a
// lambda-strongly convex loss F - F* <= ||grad||^2 / (2 lambda): 5e-10 at lambda 1e-4) or after
// kMaxSteps; F* is then accurate far beyond what a 2% target needs.
double optimum_loss(const Workload& workload) {
  constexpr int kMaxSteps = 1500;
  const std::size_t dim = workload.dim();
  std::vector<std::uint32_t> all(workload.samples());
  std::iota(all.begin(), all.end(), 0U);
  std::vector<double> x(dim), y(dim), x_next(dim), g(dim);
  workload.initial(x);
  y = x;
  double fx = workload.loss(x);
  double lipschitz = 1.0;
  double momentum = 1.0;
  for (int step = 0; step < kMaxSteps; ++step) {
    workload.gradient(y, all, g);
    const double gg = sq_norm(g);
    if (gg < 1e-13) break;
    const double fy = workload.loss(y);
    double f_next = 0;
    for (;;) {
      for (std::size_t j = 0; j < dim; ++j) x_next[j] = y[j] - g[j] / lipschitz;
      f_next = workload.loss(x_next);
      if (f_next <= fy - 0.5 * gg / lipschitz || lipschitz > 1e12) break;
      lipschitz *= 2;
    }
    if (f_next > fx) {  // restart the momentum
      y = x;
      momentum = 1.0;
      continue;
    }
    const double m_next = 0.5 * (1 + std::sqrt(1 + 4 * momentum * momentum));
    const double beta = (momentum - 1) / m_next;
    for (std::size_t j = 0; j < dim; ++j) y[j] = x_next[j] + beta * (x_next[j] - x[j]);
    x.swap(x_next);
    fx = f_next;
    momentum = m_next;
    lipschitz *= 0.9;  // let the step grow back
  }
  return fx;
}

}  // namespace

LossTarget loss_target(const Workload& workload, double fraction) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<double, double>> cache;  // key -> (F(w0), F*)
  std::vector<double> w(workload.dim());
  workload.initial(w);
  const double initial = workload.loss(w);
  // The name alone may not tell two data seeds apart: the loss at a fixed probe point does.
  std::vector<double> probe(w.size());
  for (std::size_t j = 0; j < probe.size(); ++j) probe[j] = w[j] + ((j % 2) ? 0.01 : -0.01);
  const std::string key = workload.name() + "|" + std::to_string(workload.loss(probe));
  std::pair<double, double> known;
  {
    std::lock_guard lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end())
      known = it->second;
    else
      known = {initial, kNoStat};
  }
  if (std::isnan(known.second)) {
    known.second = optimum_loss(workload);
    std::lock_guard lock(mutex);
    cache[key] = known;
  }
  return {known.first, known.second, known.second + fraction * (known.first - known.second)};
}

}  // namespace chorus::sgd
