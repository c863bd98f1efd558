#include "examples/quorum-training/key_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace quorum_training {
namespace {

using chorus::Result;
using chorus::Status;

Status write_key(const std::string& path, const std::string& key) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return chorus::io_error("cannot create " + path + ": " + std::strerror(errno));
  const std::string line = key + "\n";
  const auto n = ::write(fd, line.data(), line.size());
  const bool ok = n == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return chorus::io_error("cannot write " + path + ": " + std::strerror(errno));
  return chorus::Status::ok_status();
}

// A key file: 40 characters of Z85 and a newline; a secret one must be private to the user.
Result<std::string> read_key(const std::string& path, bool secret) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return chorus::not_found(path + " does not exist");
    return chorus::io_error("cannot open " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (secret && (st.st_mode & 077) != 0)) {
    ::close(fd);
    return chorus::invalid_argument(
        path + " may be read by other users; it must be private: " + "chmod 600 " + path);
  }
  char buf[64];
  const auto n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  std::string key(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (!chorus::valid_curve_key(key)) {
    return chorus::invalid_argument(path + " does not hold a CURVE key (40 characters of Z85)");
  }
  return key;
}

Result<RunKeys> read_keys(const std::string& dir, bool with_ps_secret) {
  RunKeys keys;
  auto ps_pub = read_key(dir + "/ps.pub", false);
  if (!ps_pub) return ps_pub.status();
  keys.ps.public_key = *ps_pub;
  if (with_ps_secret) {
    auto ps_key = read_key(dir + "/ps.key", true);
    if (!ps_key) return ps_key.status();
    keys.ps.secret_key = *ps_key;
  }
  auto w_pub = read_key(dir + "/worker.pub", false);
  if (!w_pub) return w_pub.status();
  auto w_key = read_key(dir + "/worker.key", true);
  if (!w_key) return w_key.status();
  keys.worker = {*w_pub, *w_key};
  return keys;
}

}  // namespace

Result<RunKeys> load_or_create_keys(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) return read_keys(dir, true);
  auto ps = chorus::generate_curve_keypair();
  if (!ps) return ps.status();
  auto worker = chorus::generate_curve_keypair();
  if (!worker) return worker.status();
  const std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
  std::filesystem::remove_all(tmp, ec);
  if (::mkdir(tmp.c_str(), 0700) != 0) {
    return chorus::io_error("cannot create " + tmp + ": " + std::strerror(errno));
  }
  for (const auto& [name, key] : {std::pair<std::string, std::string>{"ps.pub", ps->public_key},
                                  {"ps.key", ps->secret_key},
                                  {"worker.pub", worker->public_key},
                                  {"worker.key", worker->secret_key}}) {
    if (auto s = write_key(tmp + "/" + name, key); !s.ok()) return s;
  }
  if (::rename(tmp.c_str(), dir.c_str()) != 0) {
    return chorus::io_error("cannot rename " + tmp + " to " + dir + ": " + std::strerror(errno));
  }
  return RunKeys{*ps, *worker};
}

Result<RunKeys> read_worker_keys(const std::string& dir) {
  return read_keys(dir, false);
}

}  // namespace quorum_training
