#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace chorus::test {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "chorus-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

std::vector<std::string> merged_env(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto key = kv.substr(0, kv.find('='));
    if (extra.count(key) == 0) out.push_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& out,
            const std::string& err, const std::map<std::string, std::string>& env) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto envs = merged_env(env);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

}  // namespace

int wait_process(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd,
                          const std::map<std::string, std::string>& env) {
  TempDir io;
  pid_t pid = spawn(argv, cwd, io / "out", io / "err", env);
  ProcessResult r;
  r.exit_code = wait_process(pid);
  r.out = read_file(io / "out");
  r.err = read_file(io / "err");
  return r;
}

ProcessResult run_chorus(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv{chorus_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd);
}

pid_t start_process(const std::vector<std::string>& argv, const std::string& cwd) {
  return spawn(argv, cwd, cwd + "/bg.out", cwd + "/bg.err", {});
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

bool sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return true;
}

bool process_alive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  std::getline(stat, content);
  auto close = content.rfind(')');
  return close == std::string::npos || content.size() < close + 3 || content[close + 2] != 'Z';
}

std::string chorus_bin() {
  return CHORUS_BIN;
}
std::string source_dir() {
  return CHORUS_SOURCE_DIR;
}
std::string binary_dir() {
  return CHORUS_BINARY_DIR;
}

}  // namespace chorus::test
