// InterfaceRates: the node's receive and transmit rates, from the byte counters of
// /proc/net/dev — of the network namespace the agent runs in, so a node namespace of the test bed
// reports its own veth, not the host's. Loopback is left out (it is not the network).
//
// Each sample() takes the counters and the time, and returns the rates since the previous
// sample: bytes per second, summed over interfaces. Per interface, wrap safe
// (counter_delta.hpp); an interface that appears is counted from its second sample on, one that
// disappears drops out. The first sample returns NaN (no interval yet).
//
// Threading: one object per sampling thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace chorus::netprobe {

struct InterfaceCounters {
  std::string name;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_bytes = 0;
};

// Parses the text of /proc/net/dev (two header lines, then "name: rx_bytes ... tx_bytes ...").
// Errors: invalid_argument naming the line that does not parse.
Result<std::vector<InterfaceCounters>> parse_net_dev(std::string_view text);

struct InterfaceRate {
  double rx_Bps;
  double tx_Bps;
};

class InterfaceRates {
 public:
  // /proc/thread-self: the calling thread's namespace (/proc/net follows the main thread's).
  explicit InterfaceRates(std::string path = "/proc/thread-self/net/dev")
      : path_(std::move(path)) {}
  // Reads the file; `t` is seconds on a steady clock. Errors: io_error (unreadable),
  // invalid_argument (unparsable).
  Result<InterfaceRate> sample(double t);
  // The same from counters already read (tests; loopback and ifb devices are left out here too).
  InterfaceRate sample(const std::vector<InterfaceCounters>& counters, double t);

 private:
  std::string path_;
  std::vector<InterfaceCounters> last_;
  double last_t_ = 0;
  bool have_last_ = false;
};

}  // namespace chorus::netprobe
