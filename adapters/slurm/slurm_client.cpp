#include "adapters/slurm/slurm_client.hpp"

#include <signal.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <unordered_map>

extern char** environ;

// Exported by libslurm 22.05 but missing from its public header.
extern "C" char* slurm_job_reason_string(enum job_state_reason inx);

#if defined(__SANITIZE_ADDRESS__)
// libslurm 22.05 leaks the error message of a refused RPC (20 bytes per refused submit, allocated
// in slurm_unpack_received_msg); LeakSanitizer would fail every sanitized chorus that meets a
// Slurm error. Ours are still checked: only allocations made inside libslurm are ignored.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libslurm.so\n";
}
#endif

namespace chorus {
namespace {

// libslurm keeps process-wide state: initialise it with the first client, free it with the last.
std::mutex g_init_mutex;
int g_clients = 0;

bool is_communication_error(int err) {
  return (err >= SLURM_COMMUNICATIONS_CONNECTION_ERROR &&
          err <= SLURM_COMMUNICATIONS_SHUTDOWN_ERROR) ||
         (err >= SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR &&
          err <= SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR) ||
         err == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT || err == SLURM_PROTOCOL_AUTHENTICATION_ERROR ||
         err == ESLURM_AUTH_CRED_INVALID || err == ETIMEDOUT || err == ECONNREFUSED;
}

// "<what>: <Slurm's text>", classified: a controller out of reach is "not now".
Status slurm_error(const std::string& what, int err, const std::string& config_path) {
  std::string text = slurm_strerror(err);
  if (is_communication_error(err)) {
    return {ErrorCode::unavailable,
            what + ": " + text + " (is slurmctld running? configuration: " + config_path + ")"};
  }
  if (err == ESLURM_INVALID_JOB_ID) return not_found(what + ": " + text);
  return invalid_argument(what + ": " + text);
}

SlurmJobState state_of(std::uint32_t job_state) {
  switch (job_state & JOB_STATE_BASE) {
    case JOB_PENDING:
      return SlurmJobState::pending;
    case JOB_RUNNING:
      return SlurmJobState::running;
    case JOB_SUSPENDED:
      return SlurmJobState::suspended;
    case JOB_COMPLETE:
      return SlurmJobState::completed;
    case JOB_CANCELLED:
      return SlurmJobState::cancelled;
    case JOB_FAILED:
      return SlurmJobState::failed;
    case JOB_TIMEOUT:
      return SlurmJobState::timeout;
    case JOB_NODE_FAIL:
      return SlurmJobState::node_fail;
    case JOB_PREEMPTED:
      return SlurmJobState::preempted;
    case JOB_BOOT_FAIL:
      return SlurmJobState::boot_fail;
    case JOB_DEADLINE:
      return SlurmJobState::deadline;
    case JOB_OOM:
      return SlurmJobState::out_of_memory;
    default:
      return SlurmJobState::unknown;
  }
}

bool parse_number(std::string_view s, std::uint32_t& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

const char* to_string(SlurmJobState state) {
  switch (state) {
    case SlurmJobState::pending:
      return "PENDING";
    case SlurmJobState::running:
      return "RUNNING";
    case SlurmJobState::suspended:
      return "SUSPENDED";
    case SlurmJobState::completed:
      return "COMPLETED";
    case SlurmJobState::cancelled:
      return "CANCELLED";
    case SlurmJobState::failed:
      return "FAILED";
    case SlurmJobState::timeout:
      return "TIMEOUT";
    case SlurmJobState::node_fail:
      return "NODE_FAIL";
    case SlurmJobState::preempted:
      return "PREEMPTED";
    case SlurmJobState::boot_fail:
      return "BOOT_FAIL";
    case SlurmJobState::deadline:
      return "DEADLINE";
    case SlurmJobState::out_of_memory:
      return "OUT_OF_MEMORY";
    case SlurmJobState::unknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

bool is_finished(SlurmJobState state) {
  switch (state) {
    case SlurmJobState::pending:
    case SlurmJobState::running:
    case SlurmJobState::suspended:
    case SlurmJobState::unknown:
      return false;
    default:
      return true;
  }
}

Result<std::uint32_t> parse_slurm_time_limit(std::string_view text) {
  auto bad = [&] {
    return invalid_argument("bad time limit '" + std::string(text) +
                            "': use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED");
  };
  if (text == "UNLIMITED" || text == "unlimited" || text == "infinite" || text == "INFINITE") {
    return kSlurmUnlimited;
  }
  std::uint32_t days = 0;
  std::string_view rest = text;
  bool has_days = false;
  if (std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    if (!parse_number(text.substr(0, dash), days)) return bad();
    rest = text.substr(dash + 1);
    has_days = true;
  }
  std::vector<std::uint32_t> parts;
  std::size_t start = 0;
  while (start <= rest.size()) {
    std::size_t colon = rest.find(':', start);
    if (colon == std::string_view::npos) colon = rest.size();
    std::uint32_t v = 0;
    if (!parse_number(rest.substr(start, colon - start), v) || v > 1'000'000) return bad();
    parts.push_back(v);
    start = colon + 1;
  }
  if (parts.size() > 3) return bad();
  std::uint64_t seconds = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = days * 86400ull + parts[0] * 3600ull;
    if (parts.size() > 1) seconds += parts[1] * 60ull;
    if (parts.size() > 2) seconds += parts[2];
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60ull;  // MM
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60ull + parts[1];  // MM:SS
  } else {
    seconds = parts[0] * 3600ull + parts[1] * 60ull + parts[2];  // HH:MM:SS
  }
  std::uint64_t minutes = (seconds + 59) / 60;
  if (minutes == 0) return invalid_argument("bad time limit '" + std::string(text) + "': zero");
  if (minutes >= kSlurmUnlimited - 1) return bad();
  return static_cast<std::uint32_t>(minutes);
}

Result<std::unique_ptr<SlurmClient>> SlurmClient::open() {
  const char* env = std::getenv("SLURM_CONF");
  std::string path = env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
  // libslurm calls fatal() (exits the process) without a configuration, after trying a DNS
  // lookup for a configless controller: refuse before it gets there.
  if (::access(path.c_str(), R_OK) != 0) {
    return Status{ErrorCode::unavailable, "no Slurm configuration at " + path + " (" +
                                              std::strerror(errno) +
                                              "): set SLURM_CONF to your cluster's slurm.conf"};
  }
  std::lock_guard lock(g_init_mutex);
  if (g_clients++ == 0) slurm_init(path.c_str());
  return std::unique_ptr<SlurmClient>(new SlurmClient(path));
}

SlurmClient::~SlurmClient() {
  std::lock_guard lock(g_init_mutex);
  if (--g_clients == 0) slurm_fini();
}

Result<std::uint32_t> SlurmClient::submit_batch(const BatchJobRequest& request) {
  if (!request.script.starts_with("#!")) {
    return invalid_argument("a batch script must start with '#!' (e.g. #!/bin/bash)");
  }
  if (request.nodes < 1) {
    return invalid_argument("a batch job needs at least 1 node, not " +
                            std::to_string(request.nodes));
  }
  std::vector<std::string> env_copy = request.environment;
  if (env_copy.empty()) {
    for (char** e = environ; *e != nullptr; ++e) env_copy.emplace_back(*e);
  }
  std::vector<char*> env_ptrs;
  env_ptrs.reserve(env_copy.size() + 1);
  for (auto& e : env_copy) env_ptrs.push_back(e.data());
  env_ptrs.push_back(nullptr);

  std::string work_dir = request.work_dir;
  if (work_dir.empty()) {
    std::error_code ec;
    work_dir = std::filesystem::current_path(ec).string();
  }
  // libslurm takes char* everywhere but does not modify the request.
  std::string script = request.script;
  std::string partition = request.partition;
  std::string name = request.job_name;
  std::string std_out = request.stdout_path;
  std::string std_err = request.stderr_path;
  auto c_or_null = [](std::string& s) { return s.empty() ? nullptr : s.data(); };

  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  desc.script = script.data();
  desc.min_nodes = static_cast<std::uint32_t>(request.nodes);
  desc.max_nodes = static_cast<std::uint32_t>(request.nodes);
  if (request.exclusive) desc.shared = JOB_SHARED_NONE;
  if (request.no_kill) desc.kill_on_node_fail = 0;
  if (request.time_limit_minutes) {
    desc.time_limit =
        *request.time_limit_minutes == kSlurmUnlimited ? INFINITE : *request.time_limit_minutes;
  }
  desc.partition = c_or_null(partition);
  desc.name = c_or_null(name);
  desc.work_dir = work_dir.data();
  desc.std_out = c_or_null(std_out);
  desc.std_err = c_or_null(std_err);
  desc.environment = env_ptrs.data();
  desc.env_size = static_cast<std::uint32_t>(env_copy.size());
  desc.user_id = ::getuid();
  desc.group_id = ::getgid();

  submit_response_msg_t* response = nullptr;
  if (slurm_submit_batch_job(&desc, &response) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    if (response != nullptr) slurm_free_submit_response_response_msg(response);
    return slurm_error("cannot submit the batch job", err, config_path_);
  }
  std::uint32_t id = response->job_id;
  slurm_free_submit_response_response_msg(response);
  return id;
}

Result<std::vector<SlurmJobInfo>> SlurmClient::query(std::span<const std::uint32_t> job_ids) {
  std::vector<SlurmJobInfo> out;
  if (job_ids.empty()) return out;
  // One RPC for all jobs whatever their number: the controller's cost is one message, not one
  // per job (slurm_load_job per id would be N round trips and N controller locks).
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    return slurm_error("cannot query the Slurm jobs", err, config_path_);
  }
  std::unordered_map<std::uint32_t, const slurm_job_info_t*> by_id;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    by_id.emplace(msg->job_array[i].job_id, &msg->job_array[i]);
  }
  out.reserve(job_ids.size());
  for (std::uint32_t id : job_ids) {
    SlurmJobInfo info;
    info.job_id = id;
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      info.reason = "not known to the controller (never submitted there, or purged)";
      out.push_back(std::move(info));
      continue;
    }
    const slurm_job_info_t& j = *it->second;
    info.state = state_of(j.job_state);
    if (j.name != nullptr) info.name = j.name;
    if (j.nodes != nullptr) info.nodes = j.nodes;
    if (j.state_desc != nullptr && *j.state_desc != '\0') {
      info.reason = j.state_desc;
    } else if (const char* r =
                   slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason))) {
      info.reason = r;
    }
    if (j.work_dir != nullptr) info.work_dir = j.work_dir;
    info.start_time = static_cast<std::int64_t>(j.start_time);
    info.end_time = static_cast<std::int64_t>(j.end_time);
    int status = static_cast<int>(j.exit_code);
    if (WIFSIGNALED(status)) {
      info.exit_signal = WTERMSIG(status);
    } else {
      info.exit_code = WEXITSTATUS(status);
    }
    out.push_back(std::move(info));
  }
  slurm_free_job_info_msg(msg);
  return out;
}

Result<SlurmPartitionInfo> SlurmClient::partition(const std::string& name) {
  partition_info_msg_t* msg = nullptr;
  if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    return slurm_error("cannot read the Slurm partitions", err, config_path_);
  }
  std::string known;
  std::optional<SlurmPartitionInfo> found;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    const partition_info_t& p = msg->partition_array[i];
    const std::string pname = p.name != nullptr ? p.name : "";
    known += (known.empty() ? "" : ", ") + pname;
    const bool match = name.empty() ? (p.flags & PART_FLAG_DEFAULT) != 0 : pname == name;
    if (!match || found) continue;
    SlurmPartitionInfo info;
    info.name = pname;
    info.nodes = static_cast<int>(p.total_nodes);
    info.cpus_per_node = p.total_nodes > 0 ? static_cast<int>(p.total_cpus / p.total_nodes) : 0;
    info.max_time_minutes = p.max_time == INFINITE ? kSlurmUnlimited : p.max_time;
    found = info;
  }
  slurm_free_partition_info_msg(msg);
  if (!found) {
    return not_found(name.empty()
                         ? "Slurm has no default partition (partitions: " + known + ")"
                         : "no Slurm partition '" + name + "' (partitions: " + known + ")");
  }
  return *found;
}

Result<std::vector<std::string>> SlurmClient::node_addresses(std::span<const std::string> names) {
  node_info_msg_t* msg = nullptr;
  if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
    int err = slurm_get_errno();
    return slurm_error("cannot read the Slurm nodes", err, config_path_);
  }
  std::unordered_map<std::string, std::string> address_of;
  for (std::uint32_t i = 0; i < msg->record_count; ++i) {
    const node_info_t& n = msg->node_array[i];
    if (n.name == nullptr) continue;
    address_of[n.name] = n.node_addr != nullptr ? n.node_addr : n.name;
  }
  slurm_free_node_info_msg(msg);
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& name : names) {
    auto it = address_of.find(name);
    out.push_back(it == address_of.end() ? std::string() : it->second);
  }
  return out;
}

Status SlurmClient::cancel(std::uint32_t job_id) {
  if (slurm_kill_job(job_id, SIGKILL, 0) == SLURM_SUCCESS) return {};
  int err = slurm_get_errno();
  if (err == ESLURM_ALREADY_DONE) return {};
  return slurm_error("cannot cancel job " + std::to_string(job_id), err, config_path_);
}

}  // namespace chorus
