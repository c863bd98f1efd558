// The kernel's own view of one TCP connection (getsockopt TCP_INFO).
#pragma once

namespace chorus::netprobe {

// The connection's minimum RTT in seconds (tcpi_min_rtt, Linux >= 4.6): the round trip to the
// TCP endpoint at the other end of this connection, without queueing (the handshake's sample
// included). Where a proxy or relay terminates TCP on the way, that is the round trip to the
// relay, below the application's round trip: slow start then ramps at this RTT. NaN when the
// kernel does not say (not a TCP socket, an older kernel, no sample yet).
double tcp_min_rtt_seconds(int fd);

}  // namespace chorus::netprobe
