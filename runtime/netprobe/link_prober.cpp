#include "runtime/netprobe/link_prober.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "runtime/netprobe/data_client.hpp"
#include "runtime/netprobe/socket_util.hpp"

namespace chorus::netprobe {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double seconds_of(Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

struct LinkProber::Link {
  struct Direction {
    bool started = false;
    std::uint64_t next_size = 0;
    double capacity = 0;     // highest rate of a probe long enough to count
    double fill_rate = 0;    // bytes per second into the budget
    double tokens = 0;       // bytes the next probe may spend
    double tokens_at = 0;    // when `tokens` was last brought up to date
    double reported_at = 0;  // when the reported rate was measured; 0 = never
    double probed_at = 0;    // when the last probe ended
    bool reported_long = false;
  };
  ProbeTarget target;
  std::optional<DataClient> client;
  double rtt_min = kInf;
  double next_rtt = 0;
  double retry_at = 0;
  double backoff = 1;
  Direction down, up;
  // Read by snapshot() under the prober's mutex.
  LinkTelemetry figures;
  double rtt_at = 0;
  LinkProbeStats stats;
};

LinkProber::LinkProber(ProbeBudget budget) : budget_(budget), thread_([this] { run(); }) {}

LinkProber::~LinkProber() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LinkProber::set_targets(std::vector<ProbeTarget> targets, std::uint32_t generation) {
  {
    std::lock_guard lock(mu_);
    pending_ = std::move(targets);
    generation_ = generation;
    changed_ = true;
  }
  cv_.notify_all();
}

void LinkProber::snapshot(AgentTelemetry& out, double now_s) const {
  std::lock_guard lock(mu_);
  out.targets_generation = generation_;
  out.links.resize(changed_ ? 0 : links_.size());
  for (std::size_t i = 0; i < out.links.size(); ++i) {
    const Link& l = *links_[i];
    out.links[i] = l.figures;
    const double newest = std::max({l.rtt_at, l.down.reported_at, l.up.reported_at});
    out.links[i].age_s = newest > 0 ? std::max(0.0, now_s - newest) : LinkTelemetry::kNaN;
  }
}

std::vector<LinkProbeStats> LinkProber::stats() const {
  std::lock_guard lock(mu_);
  std::vector<LinkProbeStats> out;
  for (const auto& l : links_) out.push_back(l->stats);
  return out;
}

void LinkProber::run() {
  double wake = 0;
  std::unique_lock lock(mu_);
  for (;;) {
    const double now = steady_seconds();
    if (!stop_ && !changed_ && wake > now) {
      cv_.wait_for(lock, std::chrono::duration<double>(std::min(wake - now, 1.0)));
    }
    if (stop_) return;
    if (changed_) {
      // A target already probed keeps its link (connection, figures, capacity and budget):
      // a new list must not restart a budget on credit, nor forget what was measured.
      std::vector<std::unique_ptr<Link>> old = std::move(links_);
      links_.clear();
      for (auto& t : pending_) {
        auto same = std::find_if(old.begin(), old.end(), [&](const auto& l) {
          return l && l->target.host == t.host && l->target.port == t.port &&
                 l->target.probe == t.probe;
        });
        if (same != old.end()) {
          links_.push_back(std::move(*same));
          links_.back()->target.name = std::move(t.name);
        } else {
          links_.push_back(std::make_unique<Link>());
          links_.back()->target = std::move(t);
        }
      }
      pending_.clear();
      changed_ = false;
    }
    if (steady_seconds() < wake) continue;
    // Probes run without the lock (snapshot() must never wait for one); the list cannot change
    // under us meanwhile: only this thread replaces it, above.
    std::vector<Link*> links;
    for (const auto& l : links_) links.push_back(l.get());
    lock.unlock();
    wake = steady_seconds() + 1.0;
    for (Link* l : links) {
      wake = std::min(wake, step(*l, steady_seconds()));
      std::lock_guard check(mu_);
      if (stop_ || changed_) break;
    }
    lock.lock();
  }
}

void LinkProber::failed(Link& link, double now) {
  link.client.reset();
  link.retry_at = now + link.backoff;
  link.backoff = std::min(link.backoff * 2, 60.0);
  std::lock_guard lock(mu_);
  ++link.stats.failures;
}

double LinkProber::step(Link& link, double now) {
  if (link.target.probe == SourceProbe::none) return now + 60;
  if (now < link.retry_at) return link.retry_at;
  if (link.target.probe == SourceProbe::connect) {
    if (now >= link.next_rtt) {
      auto t = tcp_connect_seconds(link.target.host, link.target.port, budget_.timeout);
      if (!t.ok()) {
        failed(link, now);
        return link.retry_at;
      }
      link.backoff = 1;
      link.next_rtt = now + seconds_of(budget_.connect_interval);
      std::lock_guard lock(mu_);
      link.figures.rtt_s = *t;
      link.figures.tcp_rtt_s = *t;  // the connect time is TCP's own round trip
      link.rtt_at = steady_seconds();
    }
    return link.next_rtt;
  }
  if (!link.client) {
    auto c = DataClient::connect(link.target.host, link.target.port, budget_.timeout);
    if (!c.ok()) {
      failed(link, now);
      return link.retry_at;
    }
    link.client.emplace(std::move(*c));
  }
  if (now >= link.next_rtt) {
    probe_rtt(link, now);
    if (!link.client) return link.retry_at;
  }
  double next = link.next_rtt;
  for (bool down : {true, false}) {
    Link::Direction& d = down ? link.down : link.up;
    const double t = steady_seconds();
    if (d.started) {
      d.tokens =
          std::min(d.tokens + d.fill_rate * (t - d.tokens_at), static_cast<double>(d.next_size));
      d.tokens_at = t;
    }
    const double spaced = d.probed_at + seconds_of(budget_.min_interval);
    if (!d.started || (d.tokens >= static_cast<double>(d.next_size) && t >= spaced)) {
      probe_transfer(link, down, t);
      if (!link.client) return link.retry_at;
    }
    const double need = static_cast<double>(d.next_size) - d.tokens;
    const double due =
        d.fill_rate > 0 ? d.tokens_at + std::max(0.0, need) / d.fill_rate : d.tokens_at + 60;
    next = std::min(next, std::max(due, d.probed_at + seconds_of(budget_.min_interval)));
  }
  return next;
}

void LinkProber::probe_rtt(Link& link, double now) {
  auto rtt = link.client->ping();
  if (!rtt.ok()) {
    failed(link, now);
    return;
  }
  link.backoff = 1;
  link.rtt_min = std::min(link.rtt_min, *rtt);
  link.next_rtt = now + seconds_of(budget_.rtt_interval);
  const double tcp_rtt = link.client->tcp_min_rtt_seconds();
  std::lock_guard lock(mu_);
  link.figures.rtt_s = *rtt;
  link.figures.tcp_rtt_s = tcp_rtt;
  link.rtt_at = steady_seconds();
}

void LinkProber::probe_transfer(Link& link, bool down, double now) {
  Link::Direction& d = down ? link.down : link.up;
  // A third of the bytes lead in (DataClient::get_after): the timed part is the rest.
  const std::uint64_t size = d.started ? d.next_size : budget_.first_bytes;
  const std::uint64_t lead = size / 3;
  auto r =
      down ? link.client->get_after(lead, size - lead) : link.client->put_after(lead, size - lead);
  if (!r.ok()) {
    failed(link, now);
    return;
  }
  link.backoff = 1;
  const double done = steady_seconds();
  // The first probe is on credit: the bucket starts that far below zero.
  d.tokens = (d.started ? d.tokens : 0) - static_cast<double>(size);
  d.tokens_at = done;
  d.probed_at = done;
  d.started = true;
  const double rtt = std::isfinite(link.rtt_min) ? link.rtt_min : 0;
  const double rate = static_cast<double>(r->bytes) / std::max(r->seconds, 1e-6);
  const double intended = std::max(budget_.min_seconds, 4 * rtt);
  const bool long_enough = r->seconds >= 0.8 * intended || size >= budget_.max_bytes;
  if (long_enough) d.capacity = std::max(d.capacity, rate);
  d.fill_rate = budget_.fraction * (d.capacity > 0 ? d.capacity : rate);
  const auto next =
      long_enough ? static_cast<std::uint64_t>(1.5 * d.capacity * intended) : size * 4;
  d.next_size = std::clamp(next, budget_.min_bytes, budget_.max_bytes);
  std::lock_guard lock(mu_);
  if (long_enough || !d.reported_long) {
    (down ? link.figures.down_Bps : link.figures.up_Bps) = rate;
    d.reported_at = done;
    d.reported_long = d.reported_long || long_enough;
  }
  if (down) {
    link.stats.down_bytes += size;
    ++link.stats.down_probes;
    link.stats.down_capacity_Bps = d.capacity;
  } else {
    link.stats.up_bytes += size;
    ++link.stats.up_probes;
    link.stats.up_capacity_Bps = d.capacity;
  }
}

}  // namespace chorus::netprobe
