#include "runtime/netprobe/interface_rates.hpp"

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/netprobe/counter_delta.hpp"

namespace chorus::netprobe {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The next whitespace-separated unsigned number of `s`, advancing it.
bool next_number(std::string_view& s, std::uint64_t& out) {
  s = trim(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc{} || end == s.data()) return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return true;
}

}  // namespace

Result<std::vector<InterfaceCounters>> parse_net_dev(std::string_view text) {
  std::vector<InterfaceCounters> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line_no <= 2 || trim(line).empty()) continue;  // the two header lines
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      return invalid_argument("/proc/net/dev line " + std::to_string(line_no) +
                              ": no 'interface:'");
    }
    InterfaceCounters c;
    c.name = std::string(trim(line.substr(0, colon)));
    std::string_view rest = line.substr(colon + 1);
    // Receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes ...
    std::uint64_t fields[9];
    for (auto& f : fields) {
      if (!next_number(rest, f)) {
        return invalid_argument("/proc/net/dev line " + std::to_string(line_no) +
                                ": expected 16 counters after '" + c.name + ":'");
      }
    }
    c.rx_bytes = fields[0];
    c.tx_bytes = fields[8];
    out.push_back(std::move(c));
  }
  return out;
}

Result<InterfaceRate> InterfaceRates::sample(double t) {
  std::ifstream in(path_);
  if (!in) return io_error("cannot read " + path_);
  std::stringstream ss;
  ss << in.rdbuf();
  auto counters = parse_net_dev(ss.str());
  if (!counters.ok()) return counters.status();
  return sample(*counters, t);
}

InterfaceRate InterfaceRates::sample(const std::vector<InterfaceCounters>& counters, double t) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  InterfaceRate rate{nan, nan};
  std::vector<InterfaceCounters> now;
  now.reserve(counters.size());
  for (const auto& c : counters) {
    // Not loopback, and not an ifb device: ingress shaping redirects a link's received packets
    // through one (mirred), so its counters repeat the real interface's and would count twice.
    if (c.name != "lo" && c.name.rfind("ifb", 0) != 0) now.push_back(c);
  }
  if (have_last_ && t > last_t_) {
    std::uint64_t rx = 0, tx = 0;
    for (const auto& c : now) {
      for (const auto& b : last_) {
        if (b.name != c.name) continue;
        rx += counter_delta(b.rx_bytes, c.rx_bytes);
        tx += counter_delta(b.tx_bytes, c.tx_bytes);
        break;
      }
    }
    const double dt = t - last_t_;
    rate = {static_cast<double>(rx) / dt, static_cast<double>(tx) / dt};
  }
  last_ = std::move(now);
  last_t_ = t;
  have_last_ = true;
  return rate;
}

}  // namespace chorus::netprobe
