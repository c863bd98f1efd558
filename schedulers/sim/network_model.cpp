#include "schedulers/sim/network_model.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "schedulers/netaware/features.hpp"
#include "schedulers/sim/sim_random.hpp"

namespace chorus::sim {
namespace {

using json = nlohmann::json;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform in [0, 1) and a standard normal fixed by (seed, a, b, c): the noise of one report.
double hash_uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const std::uint64_t h = mix(mix(mix(seed ^ mix(a)) ^ b) ^ c);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}
double hash_normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const double u1 = std::max(hash_uniform(seed, a, b, c * 2 + 1), 1e-12);
  const double u2 = hash_uniform(seed, a, b, c * 2 + 2);
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

TimePoint at(double s) {
  return TimePoint{} + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

Status bad(const std::string& path, const std::string& where, const std::string& what) {
  return invalid_argument(path + ": " + where + ": " + what);
}

// key=value pairs of a spec; errors name the key.
Result<std::map<std::string, std::string>> pairs(std::string_view spec, std::string_view what,
                                                 std::initializer_list<std::string_view> known) {
  std::map<std::string, std::string> out;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    const auto eq = item.find('=');
    const std::string key(item.substr(0, eq));
    if (eq == std::string_view::npos || std::find(known.begin(), known.end(), key) == known.end()) {
      std::string keys;
      for (auto k : known) keys += (keys.empty() ? "" : ", ") + std::string(k);
      return invalid_argument(std::string(what) + ": \"" + std::string(item) +
                              "\" is not KEY=VALUE with a key of " + keys);
    }
    out[key] = std::string(item.substr(eq + 1));
  }
  return out;
}

bool number(const std::string& text, double& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && p == end && std::isfinite(out);
}

Status range(const std::map<std::string, std::string>& kv, const std::string& key,
             std::string_view what, double& lo, double& hi) {
  const auto it = kv.find(key);
  if (it == kv.end()) return {};
  const auto colon = it->second.find(':');
  if (colon == std::string::npos || !number(it->second.substr(0, colon), lo) ||
      !number(it->second.substr(colon + 1), hi) || lo < 0 || hi < lo) {
    return invalid_argument(std::string(what) + ": " + key + "=" + it->second +
                            " is not LO:HI with 0 <= LO <= HI");
  }
  return {};
}

Status scalar(const std::map<std::string, std::string>& kv, const std::string& key,
              std::string_view what, double lo, double hi, double& out) {
  const auto it = kv.find(key);
  if (it == kv.end()) return {};
  if (!number(it->second, out) || out < lo || out > hi) {
    return invalid_argument(std::string(what) + ": " + key + "=" + it->second +
                            " is not a number in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
  }
  return {};
}

}  // namespace

double NetworkModel::background(std::size_t node, double t_s) const {
  const auto& levels = nodes[node].background;
  if (levels.empty()) return 0;
  const double k = std::floor(std::max(0.0, t_s) / period_s);
  return levels[static_cast<std::size_t>(std::fmod(k, static_cast<double>(levels.size())))];
}

double NetworkModel::available_Bps(std::size_t node, SourceId source, double t_s) const {
  return nodes[node].links[source].capacity_Bps * (1 - background(node, t_s));
}

double NetworkModel::loaded_rtt_s(std::size_t node, SourceId source, double t_s) const {
  return nodes[node].links[source].rtt_s * (1 + 2 * background(node, t_s));
}

double NetworkModel::runtime_s(const DataMovement& data, double cpu_s, std::size_t node, double t_s,
                               int cores, double running_cores, int transfers) const {
  const ModelNode& n = nodes[node];
  double share = 1;
  if (n.cpu_factor < 1) share = std::min(1.0, n.cpu_factor * cores / std::max(1.0, running_cores));
  double t = cpu_wall_s(cpu_s, share);
  const double sharing = std::max(1, transfers);
  // Plain paths (no relay on the way): TCP ramps at the loaded round trip.
  if (data.input_bytes > 0 && data.from < n.links.size()) {
    const double rtt = loaded_rtt_s(node, data.from, t_s);
    t += transfer_s(static_cast<double>(data.input_bytes),
                    available_Bps(node, data.from, t_s) / sharing, rtt, rtt);
  }
  if (data.output_bytes > 0 && data.to < n.links.size()) {
    const double rtt = loaded_rtt_s(node, data.to, t_s);
    t += transfer_s(static_cast<double>(data.output_bytes),
                    available_Bps(node, data.to, t_s) / sharing, rtt, rtt);
  }
  return t;
}

void NetworkModel::write_facts(NodeFacts& f, std::size_t node, double now_s, int cores,
                               double running_cores, int transfers) const {
  const ModelNode& n = nodes[node];
  f.running_cores = running_cores;
  double share = 1;
  if (n.cpu_factor < 1) share = std::min(1.0, n.cpu_factor * cores / std::max(1.0, running_cores));
  f.child_cpu = running_cores * share;
  f.cpu_quota = n.cpu_factor < 1 ? n.cpu_factor * cores : kUnknown;
  // Reports at phase + k x cadence (a phase of its own per node); before the first, none.
  const double phase = hash_uniform(seed, node, 0, 0) * cadence_s;
  if (now_s < phase) return;
  const auto k = static_cast<std::uint64_t>(std::floor((now_s - phase) / cadence_s));
  if (f.revision == k + 1) return;  // that report is already there
  const double t = phase + static_cast<double>(k) * cadence_s;
  const double bg = background(node, t);
  f.revision = k + 1;
  f.updated = at(t);
  f.links.resize(n.links.size());
  double access = 0;
  // A probe competes with the node's own transfers as one more flow: it gets 1 / (k + 1) of what
  // the background leaves; the k transfers carry the rest, which the interfaces count.
  const double own = static_cast<double>(std::max(0, transfers));
  double own_Bps = 0;
  for (std::size_t s = 0; s < n.links.size(); ++s) {
    const auto noisy = [&](double v, std::uint64_t which) {
      return v * std::max(0.05, 1 + noise * hash_normal(seed, node, k + 1, s * 3 + which));
    };
    LinkFacts& l = f.links[s];
    const double left = available_Bps(node, static_cast<SourceId>(s), t);
    l.down_Bps = noisy(left / (own + 1), 0);
    l.up_Bps = noisy(left / (own + 1), 1);
    own_Bps = std::max(own_Bps, left * own / (own + 1));
    l.rtt_s = noisy(loaded_rtt_s(node, static_cast<SourceId>(s), t), 2);
    l.tcp_rtt_s = n.links[s].rtt_s;  // TCP's minimum RTT: the unloaded path
    l.measured = f.updated;
    access = std::max(access, n.links[s].capacity_Bps);
  }
  f.rx_capacity_Bps = f.tx_capacity_Bps = access;  // the node's link, as its kernel knows it
  f.rx_Bps = bg * access + own_Bps;
  f.tx_Bps = 0.2 * bg * access;  // the background is mostly downloads; acks and requests go up
  f.backlog_bytes = bg > 0.5 ? (bg - 0.5) * 200e3 : 0;
  f.drops_per_s = bg > 0.8 ? (bg - 0.8) * 50 : 0;
}

Result<NetworkModel> parse_network_json(std::string_view text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    return invalid_argument(path + ": not a network description (not JSON: " + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "chorus-sim-network") {
    return invalid_argument(
        path + ": not a network description (\"format\" must be \"chorus-sim-network\")");
  }
  if (!j.contains("version") || j["version"] != 1) {
    return invalid_argument(path + ": network description version " +
                            (j.contains("version") ? j["version"].dump() : std::string("missing")) +
                            ", this build reads version 1");
  }
  NetworkModel m;
  try {
    m.period_s = j.value("period_s", 60.0);
    m.cadence_s = j.value("cadence_s", 5.0);
    m.noise = j.value("noise", 0.05);
    m.seed = j.value("seed", std::uint64_t{1});
    if (!(m.period_s > 0) || !(m.cadence_s > 0) || !(m.noise >= 0 && m.noise <= 1)) {
      return bad(path, "/", "period_s and cadence_s must be positive, noise in [0, 1]");
    }
    for (const auto& s : j.at("sources")) m.sources.push_back(s.get<std::string>());
    if (m.sources.empty()) return bad(path, "/sources", "at least one source");
    const auto& nodes = j.at("nodes");
    if (!nodes.is_array() || nodes.empty()) return bad(path, "/nodes", "at least one node");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string where = "/nodes/" + std::to_string(i);
      const json& n = nodes[i];
      ModelNode node;
      node.cpu_factor = n.value("cpu_factor", 1.0);
      if (!(node.cpu_factor > 0 && node.cpu_factor <= 1)) {
        return bad(path, where + "/cpu_factor", "must be in (0, 1]");
      }
      const auto& links = n.at("links");
      if (links.size() != m.sources.size()) {
        return bad(path, where + "/links",
                   std::to_string(links.size()) + " links for " + std::to_string(m.sources.size()) +
                       " sources");
      }
      for (std::size_t s = 0; s < links.size(); ++s) {
        const double mbps = links[s].at("mbps").get<double>();
        const double rtt = links[s].at("rtt_ms").get<double>();
        if (!(mbps > 0) || !(rtt > 0) || !std::isfinite(mbps) || !std::isfinite(rtt)) {
          return bad(path, where + "/links/" + std::to_string(s),
                     "mbps and rtt_ms must be positive");
        }
        node.links.push_back({mbps * 1e6 / 8, rtt / 1e3});
      }
      for (const auto& b : n.value("background", json::array())) {
        const double level = b.get<double>();
        if (!(level >= 0 && level <= 0.95)) {
          return bad(path, where + "/background", "levels must be in [0, 0.95]");
        }
        node.background.push_back(level);
      }
      m.nodes.push_back(std::move(node));
    }
  } catch (const json::exception& e) {
    return invalid_argument(path + ": not a network description: " + e.what());
  }
  return m;
}

std::string network_json(const NetworkModel& m) {
  nlohmann::ordered_json j;
  j["format"] = "chorus-sim-network";
  j["version"] = 1;
  j["period_s"] = m.period_s;
  j["cadence_s"] = m.cadence_s;
  j["noise"] = m.noise;
  j["seed"] = m.seed;
  j["sources"] = m.sources;
  auto& nodes = j["nodes"] = nlohmann::ordered_json::array();
  for (const ModelNode& n : m.nodes) {
    nlohmann::ordered_json node;
    node["cpu_factor"] = n.cpu_factor;
    auto& links = node["links"] = nlohmann::ordered_json::array();
    for (const ModelLink& l : n.links) {
      links.push_back({{"mbps", l.capacity_Bps * 8 / 1e6}, {"rtt_ms", l.rtt_s * 1e3}});
    }
    node["background"] = n.background;
    nodes.push_back(std::move(node));
  }
  return j.dump(1) + "\n";
}

Result<NetworkModel> generate_network(std::string_view spec, std::size_t default_nodes) {
  constexpr std::string_view what = "--network gen";
  auto kv = pairs(spec, what,
                  {"nodes", "sources", "bw", "rtt", "bg", "slow", "period", "periods", "seed"});
  if (!kv.ok()) return kv.status();
  double nodes = static_cast<double>(default_nodes), sources = 2, bw_lo = 10, bw_hi = 200,
         rtt_lo = 1, rtt_hi = 40, bg = 0.6, slow = 0.25, period = 60, periods = 60, seed = 1;
  for (Status s :
       {scalar(*kv, "nodes", what, 1, 1e6, nodes), scalar(*kv, "sources", what, 1, 1000, sources),
        range(*kv, "bw", what, bw_lo, bw_hi), range(*kv, "rtt", what, rtt_lo, rtt_hi),
        scalar(*kv, "bg", what, 0, 0.95, bg), scalar(*kv, "slow", what, 0, 1, slow),
        scalar(*kv, "period", what, 1e-3, 1e9, period),
        scalar(*kv, "periods", what, 1, 1e6, periods), scalar(*kv, "seed", what, 0, 1e18, seed)}) {
    if (!s.ok()) return s;
  }
  if (bw_lo <= 0 || rtt_lo <= 0)
    return invalid_argument(std::string(what) + ": bw and rtt must be above 0");
  NetworkModel m;
  m.period_s = period;
  m.seed = static_cast<std::uint64_t>(seed);
  SimRandom rng(m.seed);
  for (int s = 0; s < static_cast<int>(sources); ++s)
    m.sources.push_back("store" + std::to_string(s));
  for (std::size_t i = 0; i < static_cast<std::size_t>(nodes); ++i) {
    ModelNode n;
    n.cpu_factor = rng.uniform() < slow ? 0.5 : 1.0;
    for (std::size_t s = 0; s < m.sources.size(); ++s) {
      const double mbps = std::exp(rng.uniform(std::log(bw_lo), std::log(bw_hi) + 1e-12));
      n.links.push_back({mbps * 1e6 / 8, rng.uniform(rtt_lo, rtt_hi + 1e-12) / 1e3});
    }
    for (int p = 0; p < static_cast<int>(periods); ++p)
      n.background.push_back(rng.uniform(0, bg + 1e-12));
    m.nodes.push_back(std::move(n));
  }
  return m;
}

Status assign_data(Workload& w, std::string_view spec, std::size_t sources) {
  constexpr std::string_view what = "--data";
  auto kv = pairs(spec, what, {"in", "out", "seed"});
  if (!kv.ok()) return kv.status();
  double in_lo = 1, in_hi = 200, out_lo = 0, out_hi = 20, seed = 1;
  for (Status s : {range(*kv, "in", what, in_lo, in_hi), range(*kv, "out", what, out_lo, out_hi),
                   scalar(*kv, "seed", what, 0, 1e18, seed)}) {
    if (!s.ok()) return s;
  }
  if (sources == 0) return invalid_argument("--data needs a network with sources (--network)");
  SimRandom rng(static_cast<std::uint64_t>(seed) ^ 0x5eedda7aULL);
  for (SimJob& job : w.jobs) {
    for (SimTask& t : job.tasks) {
      const double in = in_hi <= 0 ? 0
                        : in_lo > 0
                            ? std::exp(rng.uniform(std::log(in_lo), std::log(in_hi) + 1e-12))
                            : rng.uniform(0, in_hi);
      const double out = rng.uniform(out_lo, out_hi + 1e-12);
      t.data.input_bytes = static_cast<std::uint64_t>(in * 1e6);
      t.data.from =
          t.data.input_bytes > 0 ? static_cast<SourceId>(rng.next_u64() % sources) : kNoSource;
      t.data.output_bytes = static_cast<std::uint64_t>(out * 1e6);
      t.data.to =
          t.data.output_bytes > 0 ? static_cast<SourceId>(rng.next_u64() % sources) : kNoSource;
      t.data.cpu = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(t.runtime_s));
    }
  }
  return {};
}

}  // namespace chorus::sim
