#include "runtime/orphans.hpp"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>

#include "adapters/local/process_identity.hpp"

namespace chorus {
namespace {

// Which of the wanted entries the process's environment holds.
struct EnvMatch {
  bool token = false;      // CHORUS_RUN_TOKEN=<token>
  bool any_token = false;  // some CHORUS_RUN_TOKEN
  bool id = false;         // CHORUS_RUN_ID=<id>
};

EnvMatch read_environment(pid_t pid, std::string_view token_entry, std::string_view id_entry) {
  EnvMatch m;
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return m;  // gone, or not ours to read
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view kTokenPrefix = "CHORUS_RUN_TOKEN=";
  for (std::size_t pos = 0; pos < env.size();) {
    std::size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    const std::string_view entry(env.data() + pos, end - pos);
    if (entry.starts_with(kTokenPrefix)) {
      m.any_token = true;
      if (!token_entry.empty() && entry == token_entry) m.token = true;
    } else if (!id_entry.empty() && entry == id_entry) {
      m.id = true;
    }
    pos = end + 1;
  }
  return m;
}

// Whether `previous` says this attempt was still running when its coordinator stopped: a task
// whose end is journaled was reaped by the launcher after its whole group was killed.
bool still_running(const RunState& previous, const TaskGroup& g) {
  auto it = std::lower_bound(previous.tasks.begin(), previous.tasks.end(), g.task,
                             [](const TaskRecord& r, TaskId id) { return r.task < id; });
  if (it == previous.tasks.end() || it->task != g.task) return false;
  return it->attempt == g.attempt && it->state == TaskState::running;
}

}  // namespace

int kill_orphans_of_run(const RunInfo& run, std::span<const TaskGroup> groups,
                        const RunState& previous) {
  const pid_t self = getpid();
  int killed = 0;
  // Start times count from boot: groups journaled on another boot are gone with it.
  if (!run.boot_id.empty() && run.boot_id == boot_id()) {
    for (const TaskGroup& g : groups) {
      const auto leader = static_cast<pid_t>(g.pgid);
      if (leader <= 1 || leader == self || !still_running(previous, g)) continue;
      const auto start = process_start_ticks(leader);
      if (!start || *start != g.start_ticks) continue;  // ended, or the pid is someone else's now
      if (getpgid(leader) != leader) continue;          // left its group: not ours to kill whole
      if (kill(-leader, SIGKILL) == 0) ++killed;
    }
  }

  const std::string token_entry = run.token.empty() ? "" : "CHORUS_RUN_TOKEN=" + run.token;
  const std::string id_entry = run.token.empty() ? "CHORUS_RUN_ID=" + run.id : "";
  if (run.id.empty() && token_entry.empty()) return killed;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return killed;
  while (dirent* d = readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(d->d_name[0]))) continue;
    pid_t pid = static_cast<pid_t>(std::strtol(d->d_name, nullptr, 10));
    if (pid <= 1 || pid == self) continue;
    const EnvMatch m = read_environment(pid, token_entry, id_entry);
    const bool ours = token_entry.empty() ? (m.id && !m.any_token) : m.token;
    if (!ours) continue;
    if (getpgid(pid) == pid) kill(-pid, SIGKILL);  // the task's whole group
    if (kill(pid, SIGKILL) == 0) ++killed;
  }
  closedir(proc);
  return killed;
}

}  // namespace chorus
