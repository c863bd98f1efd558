#include "schedulers/netaware/network_aware_policy.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "schedulers/placement/least_allocated.hpp"

namespace chorus {
namespace {

// Scores of the three tiers lie this far apart (estimates are seconds, far below it).
constexpr double kTier = 1e15;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

double fallback_score(const TaskSpec& task, const NodeView& node) {
  return -2 * kTier + least_allocated_score(task, node);
}

// The tier a score is in: 0 (the best estimates), 1 (outside the model's prefilter), 2 (fallback).
int tier_of(double score) {
  if (score > -0.5 * kTier) return 0;
  if (score > -1.5 * kTier) return 1;
  return 2;
}

}  // namespace

std::vector<OptionSpec> NetworkAwarePolicy::option_specs() {
  return {{"model", OptionKind::text},
          {"max_age", OptionKind::duration},
          {"max_stale", OptionKind::duration},
          {"prefilter", OptionKind::number},
          {"wait", OptionKind::text}};
}

Result<std::unique_ptr<PlacementPolicy>> NetworkAwarePolicy::from_args(PolicyArgs& args) {
  Options o;
  o.source_names = args.context().source_names;
  if (auto d = args.duration("max_age")) o.max_age = *d;
  if (auto d = args.duration("max_stale")) o.max_stale = *d;
  if (const OptionEntry* e = args.find("max_age"); e != nullptr && o.max_age <= Duration::zero()) {
    args.fail(e->value.at, "'max_age' of " + args.policy() + " must be positive");
  }
  if (const OptionEntry* e = args.find("max_stale"); e != nullptr && o.max_stale < o.max_age) {
    args.fail(e->value.at, "'max_stale' of " + args.policy() + " (" + format_duration(o.max_stale) +
                               ") must be at least 'max_age' (" + format_duration(o.max_age) + ")");
  }
  if (auto n = args.number("prefilter")) {
    if (!(*n >= 1 && *n <= static_cast<double>(kMaxPrefilter)) || *n != std::floor(*n)) {
      args.fail(args.find("prefilter")->value.at,
                "'prefilter' of " + args.policy() + " must be a whole number in 1.." +
                    std::to_string(kMaxPrefilter) + ", got " + args.find("prefilter")->value.text);
    } else {
      o.prefilter = static_cast<std::size_t>(*n);
    }
  }
  if (const OptionEntry* e = args.find("wait")) {
    const std::string& text = e->value.text;
    char* end = nullptr;
    const double w = std::strtod(text.c_str(), &end);
    if (text == "off") {
      o.wait = -1;
    } else if (text.empty() || *end != '\0' || !(w >= 0 && w < 1)) {
      args.fail(e->value.at, "'wait' of " + args.policy() +
                                 " is the gain a busy node must promise, a fraction in [0, 1), "
                                 "or 'off' (never wait for a busy node), got '" +
                                 text + "'");
    } else {
      o.wait = w;
    }
  }
  if (auto path = args.text("model")) {
    const OptionEntry* e = args.find("model");
    if (path->empty()) {
      args.fail(e->value.at, "'model' of " + args.policy() + " must name a model file");
    } else {
      auto model = TreeModel::load(*path);
      if (!model.ok()) {
        args.fail(e->value.at, "'model' of " + args.policy() + ": " + model.status().message());
      } else {
        o.model = std::make_shared<const TreeModel>(std::move(*model));
      }
    }
  }
  return std::unique_ptr<PlacementPolicy>(std::make_unique<NetworkAwarePolicy>(std::move(o)));
}

double NetworkAwarePolicy::analytic(const TaskSpec& task, const NodeView& node, TimePoint now,
                                    FeatureVector& f, Basis& basis, double& age_s) const {
  const NodeFacts* facts = node.facts;
  fill_features(task, node, now, f);
  if (facts == nullptr || facts->updated == TimePoint{}) {
    age_s = kNaN;
    basis = Basis::fallback;
    return kNaN;
  }
  age_s = std::max(0.0, seconds(now - facts->updated));
  if (now < facts->updated) f[static_cast<std::size_t>(Feature::telemetry_age_s)] = 0;
  // A link the task uses counts with its own age: a probe target that went down leaves the
  // node reporting but its measurement of that link growing old.
  auto link_age = [&](SourceId s) {
    if (s == kNoSource || s >= facts->links.size()) return;
    const TimePoint measured = facts->links[s].measured;
    if (measured != TimePoint{}) age_s = std::max(age_s, seconds(now - measured));
  };
  if (task.data.input_bytes > 0) link_age(task.data.from);
  if (task.data.output_bytes > 0) link_age(task.data.to);
  if (age_s > seconds(options_.max_stale)) {
    basis = Basis::fallback;
    return kNaN;
  }
  const double a = feature(f, Feature::analytic_s);
  if (!std::isfinite(a)) {
    basis = Basis::fallback;
    return kNaN;
  }
  basis = age_s > seconds(options_.max_age) ? Basis::stale : Basis::analytic;
  return a;
}

double NetworkAwarePolicy::score(const TaskSpec& task, const NodeView& node) const {
  FeatureVector f;
  Basis basis;
  double age;
  const TimePoint at = node.facts != nullptr ? node.facts->updated : TimePoint{};
  const double a = analytic(task, node, at, f, basis, age);
  return basis == Basis::fallback ? fallback_score(task, node) : -a;
}

void NetworkAwarePolicy::score_all(const TaskSpec& task, std::span<const NodeView* const> nodes,
                                   TimePoint now, std::span<double> scores) const {
  const TreeModel* model = options_.model.get();
  const std::size_t k = model != nullptr ? std::min(options_.prefilter, nodes.size()) : 0;
  // The k smallest analytic estimates: a max-heap of (estimate, candidate) on the stack.
  std::array<std::pair<double, std::uint32_t>, kMaxPrefilter> heap;
  std::size_t held = 0;
  FeatureVector f;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Basis basis;
    double age;
    const double a = analytic(task, *nodes[i], now, f, basis, age);
    if (basis == Basis::fallback) {
      scores[i] = fallback_score(task, *nodes[i]);
      continue;
    }
    scores[i] = (model != nullptr ? -kTier : 0.0) - a;
    if (k == 0) continue;
    if (held < k) {
      heap[held++] = {a, static_cast<std::uint32_t>(i)};
      std::push_heap(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(held));
    } else if (a < heap[0].first) {
      std::pop_heap(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(held));
      heap[held - 1] = {a, static_cast<std::uint32_t>(i)};
      std::push_heap(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(held));
    }
  }
  // The prefiltered nodes: the model's prediction where the snapshot is fresh, the analytic
  // estimate where it is stale. A model with no prediction (a log_ratio model where the
  // estimate is 0: nothing to correct) leaves the node behind the predicted ones, ranked by its
  // analytic estimate as set above: never a NaN score.
  for (std::size_t h = 0; h < held; ++h) {
    const auto [a, i] = heap[h];
    Basis basis;
    double age;
    (void)analytic(task, *nodes[i], now, f, basis, age);
    if (basis != Basis::analytic) {
      scores[i] = -a;
      continue;
    }
    const double predicted = model->predict_s(f);
    if (std::isfinite(predicted)) scores[i] = -predicted;
  }
}

bool NetworkAwarePolicy::waits_for_better(const TaskSpec& task, const NodeView& best,
                                          double best_score, std::span<const NodeView* const> busy,
                                          TimePoint now) const {
  // Placed now (false): how long it waited for a busy node first, for explain().
  waited_s_ = 0;
  const auto placed = [&] {
    if (task.id < waiting_since_.size() && waiting_since_[task.id] != TimePoint{}) {
      waited_s_ = std::max(0.0, seconds(now - waiting_since_[task.id]));
      waiting_since_[task.id] = TimePoint{};
    }
    return false;
  };
  if (options_.wait < 0) return placed();
  const int tier = tier_of(best_score);
  if (tier == 2) return placed();  // the best free node has no estimate: nothing to compare
  const double best_s = tier == 0 ? -best_score : -(best_score + kTier);
  const auto index = [](const NodeView& n) { return static_cast<std::size_t>(n.index); };
  FeatureVector f;
  // The model predicts for at most a quarter of `prefilter` busy nodes here (in node order,
  // among those due soon enough to win); past that a busy node is judged by its analytic
  // estimate. With score_all's `prefilter` predictions that bounds a decision at 1.25 x
  // prefilter predictions + one analytic estimate per node: ~150 us at 1,000 nodes and
  // prefilter 32 (bench/netaware/sim_cost.py), within the 200 us budget however many are busy.
  const std::size_t budget = std::max<std::size_t>(1, options_.prefilter / 4);
  std::size_t predicted = 0;
  for (const NodeView* n : busy) {
    if (index(*n) >= due_.size()) continue;
    auto& dues = due_[index(*n)];
    std::erase_if(dues, [now](TimePoint d) { return d <= now; });
    if (dues.empty()) continue;  // no task of ours due to end there: never waited for
    const TimePoint free_at = *std::min_element(dues.begin(), dues.end());
    // A node that frees too late to win whatever its estimate is skipped before the estimate:
    // on a large busy cluster most are, and the estimate is the decision's cost.
    if (seconds(free_at - now) >= (1 - options_.wait) * best_s) continue;
    Basis basis;
    double age;
    const double a = analytic(task, *n, now, f, basis, age);
    if (basis == Basis::fallback) continue;
    double there = a;
    if (options_.model != nullptr && basis == Basis::analytic && predicted < budget) {
      ++predicted;
      const double p = options_.model->predict_s(f);
      if (std::isfinite(p)) there = p;
    }
    if (seconds(free_at - now) + there < (1 - options_.wait) * best_s) {
      if (waiting_since_.size() <= task.id) waiting_since_.resize(task.id + 1);
      if (waiting_since_[task.id] == TimePoint{}) waiting_since_[task.id] = now;
      return true;
    }
  }

  // Placed on `best`: note when it is due to end there.
  if (due_.size() <= index(best)) due_.resize(index(best) + 1);
  due_[index(best)].push_back(
      now + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(best_s)));
  return placed();
}

bool NetworkAwarePolicy::explain(const TaskSpec& task, std::span<const NodeView* const> nodes,
                                 std::span<const double> scores, std::size_t chosen, TimePoint now,
                                 PlacementExplanation& out) const {
  // The chosen node, then the best others (score descending, ties in node order).
  std::array<std::size_t, PlacementExplanation::kMaxCandidates> picked{};
  std::size_t count = 0;
  picked[count++] = chosen;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i == chosen) continue;
    std::size_t at = count;
    while (at > 1 && scores[picked[at - 1]] < scores[i]) --at;
    if (at >= PlacementExplanation::kMaxCandidates) continue;
    const std::size_t end = std::min(count, PlacementExplanation::kMaxCandidates - 1);
    for (std::size_t j = end; j > at; --j) picked[j] = picked[j - 1];
    picked[at] = i;
    if (count < PlacementExplanation::kMaxCandidates) ++count;
  }
  out.candidates.resize(count);
  for (std::size_t c = 0; c < count; ++c) {
    const std::size_t i = picked[c];
    ExplainedCandidate& e = out.candidates[c];
    e.node = nodes[i]->index;
    Basis basis;
    double age;
    (void)analytic(task, *nodes[i], now, e.features, basis, age);
    e.has_features = true;
    const int tier = tier_of(scores[i]);
    e.predicted_s = tier == 0 ? -scores[i] : tier == 1 ? -(scores[i] + kTier) : kNaN;
    if (c == 0) {
      if (basis != Basis::fallback && tier == 1) {
        basis = basis == Basis::analytic && options_.model != nullptr &&
                        !std::isfinite(options_.model->predict_s(e.features))
                    ? Basis::unpredicted
                    : Basis::outside;
      }
      if (basis == Basis::analytic && options_.model != nullptr && tier == 0) basis = Basis::model;
      describe_basis(task, *nodes[i], basis, age, e.features, out.basis);
      if (waited_s_ > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "; waited %.2f s for a busy node first", waited_s_);
        out.basis.append(buf);
      }
    }
  }
  return true;
}

void NetworkAwarePolicy::describe_basis(const TaskSpec& task, const NodeView& node, Basis basis,
                                        double age_s, const FeatureVector& f,
                                        std::string& out) const {
  char buf[160];
  switch (basis) {
    case Basis::model:
      out.assign("model ");
      out.append(options_.model->path());
      return;
    case Basis::analytic:
      out.assign(options_.model != nullptr ? "analytic" : "analytic (no model)");
      return;
    case Basis::stale:
      std::snprintf(buf, sizeof buf, "analytic (telemetry %.0f s old)", age_s);
      out.assign(buf);
      return;
    case Basis::outside:
      out.assign("analytic (outside the model's prefilter)");
      return;
    case Basis::unpredicted:
      out.assign("analytic (the model predicts nothing here: no estimate to correct)");
      return;
    case Basis::fallback:
      break;
  }
  out.assign("fallback least-allocated (");
  if (node.facts == nullptr || node.facts->updated == TimePoint{}) {
    out.append("no telemetry");
  } else if (age_s > seconds(options_.max_stale)) {
    std::snprintf(buf, sizeof buf, "telemetry %.0f s old, past max_stale %.0f s", age_s,
                  seconds(options_.max_stale));
    out.append(buf);
  } else {
    // The analytic estimate needs the bandwidth to each source the task moves data with.
    const bool down = task.data.input_bytes > 0 && !(feature(f, Feature::down_mbps) > 0);
    const SourceId s = down ? task.data.from : task.data.to;
    out.append("no bandwidth measured ");
    out.append(down ? "from '" : "to '");
    if (s < options_.source_names.size()) {
      out.append(options_.source_names[s]);
    } else {
      std::snprintf(buf, sizeof buf, "source %u", static_cast<unsigned>(s));
      out.append(buf);
    }
    out.append("'");
  }
  out.append(")");
}

}  // namespace chorus
