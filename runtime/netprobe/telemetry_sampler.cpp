#include "runtime/netprobe/telemetry_sampler.hpp"

#include "runtime/netprobe/child_cpu.hpp"
#include "runtime/netprobe/cpu_quota.hpp"
#include "runtime/netprobe/interface_rates.hpp"
#include "runtime/netprobe/link_capacity.hpp"
#include "runtime/netprobe/qdisc_stats.hpp"
#include "runtime/netprobe/socket_util.hpp"

namespace chorus::netprobe {

TelemetrySampler::TelemetrySampler(Duration interval)
    : interval_(interval), thread_([this] { run(); }) {}

TelemetrySampler::~TelemetrySampler() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void TelemetrySampler::set_process_groups(std::vector<int> pgids) {
  std::lock_guard lock(mu_);
  pgids_ = std::move(pgids);
}

void TelemetrySampler::latest(AgentTelemetry& out) const {
  std::lock_guard lock(mu_);
  out.rx_Bps = figures_.rx_Bps;
  out.tx_Bps = figures_.tx_Bps;
  out.backlog_bytes = figures_.backlog_bytes;
  out.drops_per_s = figures_.drops_per_s;
  out.child_cpu = figures_.child_cpu;
  out.cpu_quota = figures_.cpu_quota;
  out.rx_capacity_Bps = figures_.rx_capacity_Bps;
  out.tx_capacity_Bps = figures_.tx_capacity_Bps;
}

void TelemetrySampler::run() {
  InterfaceRates interfaces;
  QdiscStats qdiscs;
  ChildCpu children;
  std::vector<int> groups;
  constexpr double nan = AgentTelemetry::kNaN;
  // Shapers and link speeds change rarely (an operator's tc command): read once a minute.
  constexpr double kCapacityEvery_s = 60;
  LinkCapacity capacity;
  double capacity_at = -kCapacityEvery_s;
  std::unique_lock lock(mu_);
  while (!stop_) {
    groups = pgids_;
    lock.unlock();
    const double t = steady_seconds();
    AgentTelemetry f;
    if (auto r = interfaces.sample(t); r.ok()) {
      f.rx_Bps = r->rx_Bps;
      f.tx_Bps = r->tx_Bps;
    }
    if (auto q = qdiscs.sample(t); q.ok()) {
      f.backlog_bytes = q->backlog_bytes;
      f.drops_per_s = q->drops_per_s;
    } else {
      f.backlog_bytes = f.drops_per_s = nan;
    }
    f.child_cpu = children.sample(groups, t);
    f.cpu_quota = cpu_quota_cores();
    if (t - capacity_at >= kCapacityEvery_s) {
      auto c = read_link_capacity();
      capacity = c.ok() ? *c : LinkCapacity{};
      // A failed reading (interfaces changing under the dump) is retried within seconds.
      capacity_at = c.ok() ? t : t - kCapacityEvery_s + 5;
    }
    f.rx_capacity_Bps = capacity.ingress_Bps;
    f.tx_capacity_Bps = capacity.egress_Bps;
    lock.lock();
    figures_ = std::move(f);
    cv_.wait_for(lock, interval_, [this] { return stop_; });
  }
}

}  // namespace chorus::netprobe
