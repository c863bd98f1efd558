#include "runtime/agent/log_fetch.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "runtime/agent/agent_protocol.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "runtime/transport/message_socket.hpp"

namespace chorus {
namespace {

constexpr std::string_view kIpc = "ipc://";

// Whether something accepts connections on the Unix socket `path` now: a coordinator killed
// with SIGKILL leaves its socket file behind, and ZeroMQ would retry it silently forever.
bool socket_answers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

Result<NodeLogs> read_node_logs(const std::string& shared_log_dir) {
  std::ifstream in(shared_log_dir + "/.node-logs");
  if (!in) return not_found("the run kept no task output on its nodes");
  NodeLogs logs;
  std::string line;
  while (std::getline(in, line)) {
    std::size_t t1 = line.find('\t');
    if (t1 == std::string::npos) continue;
    std::string kind = line.substr(0, t1);
    if (kind == "control") {
      logs.control_endpoint = line.substr(t1 + 1);
    } else if (kind == "node") {
      std::size_t t2 = line.find('\t', t1 + 1);
      if (t2 == std::string::npos) continue;
      logs.node_dirs[line.substr(t1 + 1, t2 - t1 - 1)] = line.substr(t2 + 1);
    }
  }
  return logs;
}

Status fetch_node_file(const std::string& control_endpoint, const std::string& node,
                       const std::string& path, const std::function<void(std::string_view)>& out,
                       Duration timeout) {
  const std::string gone =
      "the run's coordinator is gone (no control socket answers at " + control_endpoint + ")";
  if (!control_endpoint.starts_with(kIpc)) return Status(ErrorCode::unavailable, gone);
  std::string sock = control_endpoint.substr(kIpc.size());
  if (!socket_answers(sock)) return Status(ErrorCode::unavailable, gone);
  std::string key_dir = sock.substr(0, sock.rfind('/'));
  auto keys = read_agent_keys(key_dir + "/.control");
  if (!keys.ok()) return keys.status();
  auto socket = ClientSocket::connect(control_endpoint, keys->coordinator_public, keys->agent);
  if (!socket.ok()) return socket.status();
  ClientSocket& s = **socket;
  std::uint64_t offset = 0;
  std::uint64_t request = 0;
  std::string payload;
  while (true) {
    FetchRequest f{++request, node, path, offset, kFetchChunk};
    if (Status st = s.send(encode_fetch(AgentMessage::control_fetch, f)); !st.ok()) return st;
    const TimePoint give_up = Clock::now() + timeout;
    FetchReply r;
    bool got = false;
    while (!got) {
      auto m = s.receive(payload);
      if (!m.ok()) return m.status();
      if (*m) {
        MessageHeader h = message_type(payload);
        if (!h.ok || h.type != AgentMessage::fetched || !decode_fetched(payload, r)) {
          return invalid_argument("a malformed reply from the coordinator");
        }
        got = r.request == request;  // an older request's late answer is dropped
        continue;
      }
      if (s.authentication_refused()) {
        return invalid_argument("the coordinator refused the key in " + key_dir + "/.control");
      }
      auto now = Clock::now();
      if (now >= give_up) {
        return Status(ErrorCode::unavailable, "no answer from the coordinator at " +
                                                  control_endpoint + " within " +
                                                  format_duration(timeout));
      }
      pollfd p{s.fd(), POLLIN, 0};
      ::poll(&p, 1, 50);
    }
    if (!r.ok) {
      ErrorCode code = r.message.find("No such file") != std::string::npos ? ErrorCode::not_found
                                                                           : ErrorCode::io_error;
      return Status(code, "node " + node + ": " + r.message);
    }
    if (r.offset != offset || r.data.size() > kFetchChunk ||
        (!r.data.empty() && r.offset + r.data.size() > r.size)) {
      return invalid_argument("node " + node + " sent a piece that was not asked for (offset " +
                              std::to_string(r.offset) + ", " + std::to_string(r.data.size()) +
                              " bytes)");
    }
    if (r.data.empty()) return {};
    out(r.data);
    offset += r.data.size();
  }
}

}  // namespace chorus
