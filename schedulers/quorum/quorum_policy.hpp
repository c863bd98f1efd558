// QuorumPolicy: when a bulk-synchronous round has heard from enough of its n workers.
//
// A round sends the same work to n workers (a parameter server's current weights, an ensemble
// member, a trial of a search) and may close before all of them answered: the results received
// so far are used, the late ones are dropped (or timed only). Waiting for all is the pace of the
// slowest worker; closing early trades result quality for time. The policy makes that call: the
// caller tells it a round began, each arrival in time order, and the clock when it asked for a
// tick; the policy answers wait or close. The caller then ends the round with every worker's
// arrival time it knows (the late ones included when they were timed rather than interrupted).
//
// Pure like the other policies (schedulers/README.md): no I/O, threads or wall clock. Times are
// seconds on the caller's clock (virtual in the simulator, a steady clock live); statistics come
// from the aggregator. The same objects run in the simulator (schedulers/quorum/sgd/), the live
// parameter server and workflow rounds (`repeat:` with `quorum:`), so what one measures is what
// the others decide.
//
// The caller's contract:
//   begin(round) once; then on_arrival for each result in arrival order (ties in any order); at
//   any time at or after deadline() it may call on_tick(now). The round closes at the first
//   `close` answer, or when all n arrived whatever the answer. A `close` before any result
//   arrived is treated as `wait` (a round always uses at least one result). Then end(...) once,
//   before the next begin. Calls cost at most a few microseconds (issue 15: at most 2 us): no
//   allocation per call after the first rounds.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace chorus {

// A statistic or quantity the caller does not have (NaN; test with std::isnan).
inline constexpr double kNoStat = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kNever = std::numeric_limits<double>::infinity();

// What the caller knows as a round begins.
struct RoundStart {
  int round = 1;                   // 1-based
  int n = 0;                       // workers asked this round (>= 1)
  double time = 0;                 // when the work was sent
  double learning_rate = kNoStat;  // the step size the aggregate will be applied with
  int batch = 0;                   // samples per worker's result; 0 when unknown
  double loss = kNoStat;           // training loss at the round's weights, when the caller has it
};

// One result arriving. The gradient statistics are NaN when the work carries none (a workflow
// round's tasks): a policy that needs them must then fall back on arrival times alone.
struct Arrival {
  int worker = 0;    // 0..n-1
  double time = 0;   // when the result arrived (same clock as RoundStart::time)
  int received = 0;  // results received this round, this one included (1..n)
  // ||g||^2 of this worker's gradient (a mean over its batch).
  double grad_sq_norm = kNoStat;
  // ||g_1 + ... + g_received||^2: the squared norm of the running sum of the received gradients,
  // this one included. With the sum of the grad_sq_norm values it gives the spread between
  // workers (the gradient noise) without sending vectors to the policy.
  double sum_sq_norm = kNoStat;
  // An optional curvature probe the aggregator may compute, the secant along the last step:
  // <grad(w_t) - grad(w_t-1), w_t - w_t-1> / ||w_t - w_t-1||^2 for this worker's batch (0 at
  // least), or NaN. The curvature along the step, not the largest one: the norm form
  // ||grad(w_t) - grad(w_t-1)|| / ||w_t - w_t-1|| overstated it and made dbw/dbw+ wait for
  // too many results (docs/quorum-policies.md).
  double curvature = kNoStat;
};

enum class QuorumVerdict : std::uint8_t { wait, close };

// How the round ended. `arrivals[i]` is when worker i's result arrived: the late ones included
// when they were timed (`timed` true), kNever for those interrupted at the close (censored at
// `closed_at`) or that never answered.
struct RoundEnd {
  int round = 1;
  double start = 0;
  double closed_at = 0;
  int used = 0;  // results aggregated (the k of this round)
  std::span<const double> arrivals;
  bool timed = false;
};

class QuorumPolicy {
 public:
  virtual ~QuorumPolicy() = default;

  virtual void begin(const RoundStart& round) = 0;
  virtual QuorumVerdict on_arrival(const Arrival& arrival) = 0;
  // When the policy wants to be asked again without an arrival (a deadline or grace window it
  // set); kNever for none. Read after begin and after every arrival or tick.
  virtual double deadline() const { return kNever; }
  virtual QuorumVerdict on_tick(double /*now*/) { return QuorumVerdict::wait; }
  virtual void end(const RoundEnd& round) = 0;

  // The k the policy currently aims at for the round in progress (for logs, the journal and
  // tests); 0 when it has no fixed target.
  virtual int target() const { return 0; }
};

}  // namespace chorus
