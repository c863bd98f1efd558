#include "runtime/transport/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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
