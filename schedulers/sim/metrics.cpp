#include "schedulers/sim/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "schedulers/sim/json_text.hpp"

namespace chorus::sim {
namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Nearest rank; `v` sorted ascending.
double percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

double jain_index(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  if (x.empty() || sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sq);
}

std::vector<double> ideal_finish_times(const std::vector<JobRecord>& jobs, double capacity,
                                       const std::map<std::string, double>& user_weights) {
  std::vector<double> finish(jobs.size(), 0);
  if (jobs.empty() || !(capacity > 0)) return finish;
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return jobs[a].arrival_s < jobs[b].arrival_s;
  });
  struct User {
    double weight = 1;
    std::deque<std::size_t> jobs;  // waiting, head in service
    double head_left = 0;          // core-seconds left of the head job
  };
  std::unordered_map<std::string, std::size_t> index;
  std::vector<User> users;
  std::vector<std::size_t> active;  // users with jobs
  double t = 0, active_weight = 0;
  std::size_t next = 0, done = 0;
  while (done < jobs.size()) {
    if (active.empty()) t = std::max(t, jobs[order[next]].arrival_s);
    // Admit every arrival up to t.
    while (next < order.size() && jobs[order[next]].arrival_s <= t) {
      const JobRecord& j = jobs[order[next]];
      auto [it, added] = index.emplace(j.user, users.size());
      if (added) {
        User u;
        if (auto w = user_weights.find(j.user); w != user_weights.end()) u.weight = w->second;
        users.push_back(u);
      }
      User& u = users[it->second];
      if (u.jobs.empty()) {
        u.head_left = j.work;
        active.push_back(it->second);
        active_weight += u.weight;
      }
      u.jobs.push_back(order[next]);
      ++next;
    }
    // Advance to the next head completion or arrival, whichever is first. The first head to
    // complete is completed exactly, so that every step ends a job or admits one whatever the
    // rounding (weights far apart once made head_left NaN and this loop endless).
    double step = std::numeric_limits<double>::infinity();
    std::size_t first_done = users.size();
    for (auto ui : active) {
      const User& u = users[ui];
      const double left = u.head_left / (capacity * u.weight / active_weight);
      if (first_done == users.size() || left < step) {
        step = left;
        first_done = ui;
      }
    }
    if (next < order.size() && jobs[order[next]].arrival_s - t < step) {
      step = jobs[order[next]].arrival_s - t;
      first_done = users.size();
    }
    if (!(step >= 0)) step = 0;  // NaN too
    double weight_before = active_weight;
    t += step;
    std::vector<std::size_t> still;
    for (auto ui : active) {
      User& u = users[ui];
      u.head_left -= step * capacity * u.weight / weight_before;
      if (ui == first_done || std::isnan(u.head_left)) u.head_left = 0;
      while (!u.jobs.empty() && u.head_left <= 1e-9 * std::max(1.0, jobs[u.jobs.front()].work)) {
        std::size_t j = u.jobs.front();
        finish[j] = std::max(t, jobs[j].arrival_s + jobs[j].alone_s);
        u.jobs.pop_front();
        ++done;
        if (!u.jobs.empty()) u.head_left = jobs[u.jobs.front()].work;
      }
      if (u.jobs.empty()) {
        active_weight -= u.weight;
      } else {
        still.push_back(ui);
      }
    }
    active.swap(still);
    active_weight = 0;  // summed afresh: subtracting weights far apart would drift
    for (auto ui : active) active_weight += users[ui].weight;
  }
  return finish;
}

Metrics compute_metrics(const SimResult& run, double capacity,
                        const std::map<std::string, double>& user_weights) {
  Metrics m;
  m.jobs = run.jobs.size();
  m.makespan_s = run.makespan_s;
  if (run.jobs.empty()) {
    m.jain_users = m.fair_attainment_jain = m.fair_attainment_min = 1;
    return m;
  }
  std::vector<double> works;
  for (const auto& j : run.jobs) works.push_back(j.work);
  std::vector<double> sorted_works = works;
  std::sort(sorted_works.begin(), sorted_works.end());
  double median_work = percentile(sorted_works, 0.5);

  std::vector<double> all, small, small_alone, large, slowdowns, large_slowdowns;
  for (const auto& j : run.jobs) {
    double r = j.response_s();
    double slowdown = j.alone_s > 0 ? r / j.alone_s : 1;
    all.push_back(r);
    slowdowns.push_back(slowdown);
    SizeClass c = j.size;
    if (c == SizeClass::unknown) c = j.work <= median_work ? SizeClass::small : SizeClass::large;
    if (c == SizeClass::small) {
      small.push_back(r);
      small_alone.push_back(j.alone_s);
    } else {
      large.push_back(r);
      large_slowdowns.push_back(slowdown);
    }
  }
  m.small_jobs = small.size();
  m.large_jobs = large.size();
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  m.mean_response_s = mean_of(all);
  m.small_mean_response_s = small.empty() ? kNone : mean_of(small);
  m.small_mean_alone_s = small.empty() ? kNone : mean_of(small_alone);
  m.large_mean_response_s = large.empty() ? kNone : mean_of(large);
  m.mean_slowdown = mean_of(slowdowns);
  m.large_mean_slowdown = large.empty() ? kNone : mean_of(large_slowdowns);
  for (auto* v : {&all, &small, &large}) std::sort(v->begin(), v->end());
  m.p90_response_s = percentile(all, 0.9);
  m.small_p90_response_s = small.empty() ? kNone : percentile(small, 0.9);
  m.large_p90_response_s = large.empty() ? kNone : percentile(large, 0.9);
  std::size_t worst = std::max<std::size_t>(1, all.size() / 10);
  m.worst10_response_s =
      std::accumulate(all.end() - static_cast<std::ptrdiff_t>(worst), all.end(), 0.0) /
      static_cast<double>(worst);

  std::vector<double> shares;
  for (const auto& [user, s] : run.users) {
    if (s.entitled > 0) shares.push_back(s.received / s.entitled);
  }
  m.jain_users = jain_index(shares);

  auto ideal = ideal_finish_times(run.jobs, capacity, user_weights);
  std::size_t late = 0;
  std::map<std::string, std::pair<double, double>> response_by_user;  // Σ ideal, Σ actual
  for (std::size_t i = 0; i < run.jobs.size(); ++i) {
    const JobRecord& j = run.jobs[i];
    if (j.finish_s > ideal[i] + 1e-3) ++late;
    auto& [ideal_sum, actual_sum] = response_by_user[j.user];
    ideal_sum += ideal[i] - j.arrival_s;
    actual_sum += j.response_s();
  }
  std::vector<double> attainment;
  for (const auto& [user, sums] : response_by_user) {
    attainment.push_back(sums.second > 0 ? std::min(1.0, sums.first / sums.second) : 1.0);
  }
  m.fair_attainment_jain = jain_index(attainment);
  m.fair_attainment_min = *std::min_element(attainment.begin(), attainment.end());
  m.deadline_violation_ratio = static_cast<double>(late) / static_cast<double>(run.jobs.size());
  return m;
}

std::string metrics_json(const Metrics& m) {
  std::string out = "{";
  auto num = [&](const char* key, double v) {
    if (out.size() > 1) out += ", ";
    out += json_quote(key) + ": " + json_number(v);
  };
  num("jobs", static_cast<double>(m.jobs));
  num("small_jobs", static_cast<double>(m.small_jobs));
  num("large_jobs", static_cast<double>(m.large_jobs));
  num("mean_response_s", m.mean_response_s);
  num("p90_response_s", m.p90_response_s);
  num("worst10_response_s", m.worst10_response_s);
  num("small_mean_response_s", m.small_mean_response_s);
  num("small_p90_response_s", m.small_p90_response_s);
  num("small_mean_alone_s", m.small_mean_alone_s);
  num("large_mean_response_s", m.large_mean_response_s);
  num("large_p90_response_s", m.large_p90_response_s);
  num("mean_slowdown", m.mean_slowdown);
  num("large_mean_slowdown", m.large_mean_slowdown);
  num("jain_users", m.jain_users);
  num("fair_attainment_jain", m.fair_attainment_jain);
  num("fair_attainment_min", m.fair_attainment_min);
  num("deadline_violation_ratio", m.deadline_violation_ratio);
  num("makespan_s", m.makespan_s);
  return out + "}";
}

}  // namespace chorus::sim
