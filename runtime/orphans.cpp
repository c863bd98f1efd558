#include "runtime/orphans.hpp"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace chorus {
namespace {

bool environment_has(pid_t pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return false;  // gone, or not ours to read
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t pos = 0; pos < env.size();) {
    std::size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, end - pos, entry) == 0) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

int kill_orphans_of_run(const std::string& run_id) {
  if (run_id.empty()) return 0;
  const std::string entry = "CHORUS_RUN_ID=" + run_id;
  const pid_t self = getpid();
  int killed = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  while (dirent* d = readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(d->d_name[0]))) continue;
    pid_t pid = static_cast<pid_t>(std::strtol(d->d_name, nullptr, 10));
    if (pid <= 1 || pid == self || !environment_has(pid, entry)) continue;
    if (getpgid(pid) == pid) kill(-pid, SIGKILL);  // the task's whole group
    if (kill(pid, SIGKILL) == 0) ++killed;
  }
  closedir(proc);
  return killed;
}

}  // namespace chorus
