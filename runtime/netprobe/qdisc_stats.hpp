// QdiscStats: bytes queued in the node's qdiscs and drops per second, from the kernel's own
// counters (rtnetlink RTM_GETQDISC dump: TCA_STATS2 / TCA_STATS_QUEUE and TCA_STATS_BASIC), in
// the network namespace of the calling thread — what `tc -s qdisc` shows.
//
// Only root qdiscs are summed (parent TC_H_ROOT, over every interface but loopback): a
// classful root (HTB, TBF with its inner fifo, mq) already reports its children's backlog and
// drops, so adding the children would count them twice. Drops are a rate over the interval
// between samples, per qdisc (ifindex, handle) and wrap safe (32-bit kernel counters); the first
// sample's rate is NaN.
//
// Why a raw netlink socket and no library (libmnl, libnl-route): one dump request and two fixed
// kernel UAPI structs are ~150 lines here, against a new third-party dependency with a home
// folder of its own. The socket and the bounded walkers are rtnetlink.hpp's (shared with
// link_capacity): every attribute length is checked against the message.
//
// Threading: one object per sampling thread; each sample opens and closes its socket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace chorus::netprobe {

struct QdiscCounters {
  int ifindex = 0;
  std::uint32_t handle = 0;
  std::uint32_t parent = 0;
  std::string kind;  // "tbf", "htb", "fq_codel", ...
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  std::uint32_t qlen = 0;
  std::uint32_t backlog = 0;  // bytes queued now
  std::uint32_t drops = 0;
};

// Every qdisc of the calling thread's network namespace. Errors: io_error with the OS's words.
Result<std::vector<QdiscCounters>> dump_qdiscs();

// Decodes one RTM_GETQDISC answer stream (netlink messages back to back) into `out`; false on a
// malformed message (a length past the end). `done` is set at NLMSG_DONE; an NLMSG_ERROR sets
// `error` to its errno.
bool decode_qdisc_messages(const char* data, std::size_t n, std::vector<QdiscCounters>& out,
                           bool& done, int& error);

struct QdiscFigures {
  double backlog_bytes;
  double drops_per_s;
};

class QdiscStats {
 public:
  // `t` is seconds on a steady clock.
  Result<QdiscFigures> sample(double t);
  QdiscFigures sample(const std::vector<QdiscCounters>& qdiscs, int loopback_ifindex, double t);

 private:
  struct Last {
    int ifindex;
    std::uint32_t handle;
    std::uint32_t drops;
  };
  std::vector<Last> last_;
  double last_t_ = 0;
  bool have_last_ = false;
};

}  // namespace chorus::netprobe
