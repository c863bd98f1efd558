#include "runtime/transport/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace chorus {
namespace {

constexpr std::size_t kZ85KeyLength = 40;

Status write_secret_file(const std::string& path, const std::string& text) {
  ::unlink(path.c_str());  // a stale file may have looser permissions: never reuse it
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot create " + path + ": " + std::strerror(errno));
  std::string line = text + "\n";
  ssize_t n = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    return io_error("cannot write " + path + ": " + std::strerror(err));
  }
  return {};
}

Result<std::string> read_key_file(const std::string& path, bool secret) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    Status s(err == ENOENT ? ErrorCode::not_found : ErrorCode::io_error,
             "cannot read key file " + path + ": " + std::strerror(err));
    return s;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (secret && (st.st_mode & 077) != 0)) {
    ::close(fd);
    return invalid_argument("key file " + path +
                            " may be read by other users; it must be private: chmod 600 " + path);
  }
  char buf[128];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return io_error("cannot read key file " + path + ": " + std::strerror(errno));
  std::string key(buf, static_cast<std::size_t>(n));
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) {
    key.pop_back();
  }
  if (!valid_curve_key(key)) {
    return invalid_argument("key file " + path + " does not hold a CURVE key (40 Z85 characters)");
  }
  return key;
}

bool has_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The node name a slot was claimed for ("" when unreadable).
std::string claimed_by(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string{};
}

// Claims `slot` for `node`: true when this call created the claim.
bool claim(const std::string& slot, const std::string& node) {
  int fd = ::open((slot + "/claimed").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ssize_t n = ::write(fd, node.data(), node.size());
  ::close(fd);
  return n == static_cast<ssize_t>(node.size());
}

}  // namespace

Result<CurveKeyPair> generate_curve_keypair() {
  char pub[kZ85KeyLength + 1] = {};
  char sec[kZ85KeyLength + 1] = {};
  if (zmq_curve_keypair(pub, sec) != 0) {
    return internal_error(std::string("cannot generate CURVE keys: ") + zmq_strerror(zmq_errno()) +
                          " (libzmq built without CURVE support?)");
  }
  return CurveKeyPair{pub, sec};
}

bool valid_curve_key(const std::string& key) {
  if (key.size() != kZ85KeyLength) return false;
  std::uint8_t raw[32];
  return zmq_z85_decode(raw, key.c_str()) != nullptr;
}

Status write_agent_keys(const std::string& dir, const AgentKeys& keys) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create key folder " + dir + ": " + ec.message());
  if (::chmod(dir.c_str(), 0700) != 0) {
    return io_error("cannot make key folder " + dir + " private: " + std::strerror(errno));
  }
  if (Status s = write_secret_file(dir + "/coordinator.pub", keys.coordinator_public); !s.ok()) {
    return s;
  }
  if (Status s = write_secret_file(dir + "/agent.pub", keys.agent.public_key); !s.ok()) return s;
  return write_secret_file(dir + "/agent.key", keys.agent.secret_key);
}

Status write_key_pair(const std::string& dir, const std::string& stem, const CurveKeyPair& pair) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create key folder " + dir + ": " + ec.message());
  if (Status s = write_secret_file(dir + "/" + stem + ".key", pair.secret_key); !s.ok()) return s;
  if (Status s = write_secret_file(dir + "/" + stem + ".pub", pair.public_key); !s.ok()) return s;
  // The public half is for others to read.
  if (::chmod((dir + "/" + stem + ".pub").c_str(), 0644) != 0) {
    return io_error("cannot chmod " + dir + "/" + stem + ".pub: " + std::strerror(errno));
  }
  return {};
}

Result<CurveKeyPair> read_key_pair(const std::string& dir, const std::string& stem) {
  auto pub = read_key_file(dir + "/" + stem + ".pub", false);
  if (!pub.ok()) return pub.status();
  auto sec = read_key_file(dir + "/" + stem + ".key", true);
  if (!sec.ok()) return sec.status();
  return CurveKeyPair{*pub, *sec};
}

Result<std::string> read_public_key(const std::string& path) {
  return read_key_file(path, false);
}

Result<AgentKeys> read_agent_keys(const std::string& dir) {
  AgentKeys keys;
  auto server = read_key_file(dir + "/coordinator.pub", false);
  if (!server.ok()) return server.status();
  auto pub = read_key_file(dir + "/agent.pub", false);
  if (!pub.ok()) return pub.status();
  auto sec = read_key_file(dir + "/agent.key", true);
  if (!sec.ok()) return sec.status();
  keys.coordinator_public = *server;
  keys.agent = {*pub, *sec};
  return keys;
}

}  // namespace chorus

namespace chorus {

Result<AgentKeys> find_agent_keys(const std::string& dir, const std::string& node) {
  if (has_file(dir + "/agent.key")) return read_agent_keys(dir);
  if (!node.empty() && node.find('/') == std::string::npos && node.front() != '.' &&
      has_file(dir + "/" + node + "/agent.key")) {
    return read_agent_keys(dir + "/" + node);
  }
  std::vector<std::string> slots;
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name.front() == '.' || !has_file(e.path().string() + "/agent.key"))
      continue;
    (name.starts_with("agent-") ? slots : nodes).push_back(name);
  }
  if (ec) return not_found("cannot read key folder " + dir + ": " + ec.message());
  // agent-2 before agent-10.
  std::sort(slots.begin(), slots.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& s : slots) {
    if (claimed_by(dir + "/" + s + "/claimed") == node) return read_agent_keys(dir + "/" + s);
  }
  for (const auto& s : slots) {
    if (claim(dir + "/" + s, node)) return read_agent_keys(dir + "/" + s);
  }
  if (!slots.empty()) {
    return Status(ErrorCode::unavailable,
                  "all " + std::to_string(slots.size()) + " agent keys in " + dir +
                      " are taken by other agents (the run waits for that many agents)");
  }
  std::sort(nodes.begin(), nodes.end());
  std::string names;
  for (const auto& n : nodes) names += (names.empty() ? "" : ", ") + n;
  return not_found("no key for node '" + node + "' in " + dir +
                   (names.empty() ? std::string(" (it holds no agent keys)")
                                  : ": the run's nodes are " + names));
}

}  // namespace chorus
