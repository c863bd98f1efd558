// SlurmClient: submit, query and cancel batch jobs through libslurm (no shelling out to sbatch).
//
// libslurm stays inside this folder: this header does not include slurm.h, so callers need
// neither its headers nor its types.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace chorus {

// A time limit of "no limit" (Slurm's INFINITE).
inline constexpr std::uint32_t kSlurmUnlimited = 0xffffffff;

struct BatchJobRequest {
  std::string script;      // the whole script, starting with "#!"
  int nodes = 1;           // exactly this many nodes
  bool exclusive = false;  // whole nodes (all their CPUs), not shared with other jobs
  // Keep the job when one of its nodes fails (sbatch --no-kill): chorus launch requeues that
  // node's tasks on the others.
  bool no_kill = false;
  // Minutes; nullopt: the partition's default; kSlurmUnlimited: none.
  std::optional<std::uint32_t> time_limit_minutes;
  std::string partition;  // empty: the default partition
  std::string job_name;
  std::string work_dir;                  // empty: the current directory
  std::string stdout_path;               // empty: Slurm's default, <work_dir>/slurm-%j.out
  std::string stderr_path;               // empty: with stdout
  std::vector<std::string> environment;  // "NAME=value"; empty: this process's environment
};

enum class SlurmJobState {
  pending,
  running,
  suspended,
  completed,
  cancelled,
  failed,
  timeout,
  node_fail,
  preempted,
  boot_fail,
  deadline,
  out_of_memory,
  unknown,  // the controller does not know the job (never existed, or purged after MinJobAge)
};

// "PENDING", "COMPLETED", ... as squeue prints them; "UNKNOWN" for unknown.
const char* to_string(SlurmJobState state);
// Whether the job has ended (it will not change state again).
bool is_finished(SlurmJobState state);

struct SlurmJobInfo {
  std::uint32_t job_id = 0;
  SlurmJobState state = SlurmJobState::unknown;
  std::string name;
  std::string nodes;    // hostlist expression; empty while pending
  std::string reason;   // why pending, or why it ended ("None" when there is nothing to say)
  int exit_code = 0;    // the batch script's exit status, once finished
  int exit_signal = 0;  // the signal that ended it, if one did
  // Seconds since the epoch: when it started, and when it ends by its time limit (while it
  // runs; 0 when not known).
  std::int64_t start_time = 0;
  std::int64_t end_time = 0;
  std::string work_dir;  // the job's working directory
};

struct SlurmPartitionInfo {
  std::string name;
  int nodes = 0;
  int cpus_per_node = 0;  // the partition's CPUs over its nodes (the smallest node's is not sent)
  std::uint32_t max_time_minutes = kSlurmUnlimited;
};

// Slurm time limits: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS", "UNLIMITED";
// in whole minutes, seconds rounded up (as sbatch does); UNLIMITED is kSlurmUnlimited.
// Errors: invalid_argument quoting the text (also for a zero limit).
Result<std::uint32_t> parse_slurm_time_limit(std::string_view text);

class SlurmClient {
 public:
  // Initialises libslurm for this process (slurm_init; slurm_fini when the last client dies).
  // The configuration is $SLURM_CONF or /etc/slurm/slurm.conf; a missing one is an
  // unavailable error naming the path, checked here because libslurm would exit the process.
  // Does not contact the controller. Not thread-safe: use one client from one thread.
  static Result<std::unique_ptr<SlurmClient>> open();
  ~SlurmClient();
  SlurmClient(const SlurmClient&) = delete;
  SlurmClient& operator=(const SlurmClient&) = delete;

  // Submits a batch job; returns its id. Errors carry Slurm's text: invalid_argument for a
  // request Slurm refuses (an unknown partition, too many nodes), unavailable when the
  // controller cannot be reached.
  Result<std::uint32_t> submit_batch(const BatchJobRequest& request);

  // The state of every job in `job_ids`, in that order, with ONE controller query however many
  // ids (slurm_load_jobs). A job the controller does not know comes back as `unknown`.
  // Errors: unavailable when the controller cannot be reached.
  Result<std::vector<SlurmJobInfo>> query(std::span<const std::uint32_t> job_ids);

  // One partition (empty name: the default one). Errors: not_found naming the partitions there
  // are, unavailable when the controller cannot be reached.
  Result<SlurmPartitionInfo> partition(const std::string& name);

  // The address of each node in `names` (Slurm's NodeAddr: what other nodes reach it at), in
  // that order, with ONE controller query (slurm_load_node); "" for a node the controller does
  // not know. Errors: unavailable when the controller cannot be reached.
  Result<std::vector<std::string>> node_addresses(std::span<const std::string> names);

  // Ends the job and all its steps (SIGKILL, as scancel does). Idempotent: a job that has
  // already finished is not an error. Errors: not_found for a job id the controller does not
  // know, unavailable when the controller cannot be reached.
  Status cancel(std::uint32_t job_id);

  // Where the configuration was read from.
  const std::string& config_path() const { return config_path_; }

 private:
  explicit SlurmClient(std::string config_path) : config_path_(std::move(config_path)) {}
  std::string config_path_;
};

}  // namespace chorus
