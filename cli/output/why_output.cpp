// `chorus why`: Output::placement_why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/output/output.hpp"
#include "schedulers/netaware/features.hpp"

namespace chorus::cli {
namespace {

// A value for JSON: null for NaN (JSON has no NaN).
nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.1f s", s);
  return buf;
}

std::string value_text(double v) {
  if (!std::isfinite(v)) return "unknown";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::vector<WhyReport::Difference> placement_differences(const PlacementRow& p, std::size_t shown) {
  std::vector<WhyReport::Difference> out;
  if (p.candidates.size() < 2) return out;
  const auto& a = p.candidates[0].features;
  const auto& b = p.candidates[1].features;
  const auto names = feature_names();
  // A record of a build with other features (a journal older than the names) is not read
  // against this build's names.
  if (a.size() != names.size() || b.size() != names.size()) return out;
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double x = a[i], y = b[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    double d = 1.0;
    if (!std::isnan(x) && !std::isnan(y)) {
      const double scale = std::max(std::fabs(x), std::fabs(y));
      if (scale == 0) continue;
      d = std::fabs(x - y) / scale;
    }
    if (d < 1e-6) continue;
    ranked.emplace_back(d, i);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& l, const auto& r) { return l.first > r.first; });
  for (std::size_t k = 0; k < ranked.size() && k < shown; ++k) {
    const std::size_t i = ranked[k].second;
    out.push_back({std::string(names[i]), a[i], b[i]});
  }
  return out;
}

void Output::placement_why(const WhyReport& r) const {
  const PlacementRow& p = r.placement;
  const auto names = feature_names();
  if (json()) {
    nlohmann::ordered_json j;
    j["run"] = r.run;
    j["task"] = p.name;
    j["attempt"] = p.attempt;
    j["policy"] = p.policy;
    j["basis"] = p.basis;
    j["node"] = p.candidates.empty() ? std::string() : p.candidates.front().node;
    j["outcome"] = r.outcome;
    j["actual_s"] = r.actual_s >= 0 ? nlohmann::ordered_json(r.actual_s) : nullptr;
    auto& cands = j["candidates"] = nlohmann::ordered_json::array();
    for (const auto& c : p.candidates) {
      nlohmann::ordered_json cj;
      cj["node"] = c.node;
      cj["predicted_s"] = number_or_null(c.predicted_s);
      nlohmann::ordered_json f = nlohmann::ordered_json::object();
      if (c.features.size() == names.size()) {  // not a record of a build with other features
        for (std::size_t i = 0; i < names.size(); ++i) {
          f[std::string(names[i])] = number_or_null(c.features[i]);
        }
      }
      cj["features"] = std::move(f);
      cands.push_back(std::move(cj));
    }
    auto& diffs = j["differences"] = nlohmann::ordered_json::array();
    for (const auto& d : r.differences) {
      diffs.push_back({{"feature", d.feature},
                       {"chosen", number_or_null(d.chosen)},
                       {"runner_up", number_or_null(d.runner_up)}});
    }
    json_document(j);
    return;
  }
  std::fprintf(out_, "task       %s (attempt %u) of run %s\n", p.name.c_str(), p.attempt,
               r.run.c_str());
  std::fprintf(out_, "placed on  %s by %s\n",
               p.candidates.empty() ? "?" : p.candidates.front().node.c_str(), p.policy.c_str());
  std::fprintf(out_, "basis      %s\n", p.basis.c_str());
  if (r.actual_s >= 0) {
    std::fprintf(out_, "took       %s (%s)%s\n", seconds_text(r.actual_s).c_str(),
                 r.outcome.c_str(), r.outcome == "running" ? ", so far" : "");
  } else {
    std::fprintf(out_, "took       unknown (%s)\n", r.outcome.c_str());
  }
  std::fprintf(out_, "candidates %zu (best first)\n", p.candidates.size());
  for (std::size_t i = 0; i < p.candidates.size(); ++i) {
    const auto& c = p.candidates[i];
    std::fprintf(out_, "  %-20s %12s%s\n", c.node.c_str(),
                 std::isfinite(c.predicted_s) ? seconds_text(c.predicted_s).c_str() : "no estimate",
                 i == 0 ? "  chosen" : "");
  }
  if (!r.differences.empty() && p.candidates.size() > 1) {
    std::fprintf(out_, "what differs most: %s vs %s\n", p.candidates[0].node.c_str(),
                 p.candidates[1].node.c_str());
    for (const auto& d : r.differences) {
      std::fprintf(out_, "  %-16s %12s %12s\n", d.feature.c_str(), value_text(d.chosen).c_str(),
                   value_text(d.runner_up).c_str());
    }
  }
}

}  // namespace chorus::cli
