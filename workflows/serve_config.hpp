// The configuration file of `chorus serve` (serve.yaml): the instance's policies and cores, who
// administers it, users' and groups' shares, and per-user limits. Read with the workflow file's
// checks and messages (path:line:col, unknown keys with a suggestion).
//
//   queue: uwfq                 # the instance's queue policy (flags override)
//   placement: first-fit
//   policy_options: {lane_cores: auto, grace: 2s}   # the policies' own options, as in a
//                               # workflow's scheduler section (checked by the policies)
//   listen: tcp://127.0.0.1:7070   # also serve over TCP, CURVE-encrypted (never without)
//   keys: {users: {alice: [PUBLIC_KEY, ...]}}   # the TCP clients' keys (chorus keys), per user
//   cores: 16                   # cores handed out on this machine (default: all)
//   admins: {users: [alice], groups: [hpcadmin]}     # see and cancel every run
//   weights: {users: {alice: 2}, groups: {physics: 3}}
//   allocation: {slurm: {partition: debug, max_jobs: 4, nodes: 2, walltime: 30m, idle_timeout: 2m}}
//   limits:
//     default: {queued_tasks: 10000, running_cores: 64}
//     users:  {bob: {queued_tasks: 100}}
//     groups: {students: {running_cores: 8}}
//
// Resolution (api/serve_access.hpp): a user's own entry, else the largest among its groups'
// entries, else the default; no entry at all = no limit, weight 1.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy_options.hpp"
#include "core/status.hpp"
#include "core/units.hpp"

namespace chorus {

struct ServeLimits {
  // Tasks of the user's runs that have not ended (queued or running): a submission that would
  // pass it is refused.
  std::optional<std::int64_t> queued_tasks;
  // Cores the user's tasks hold at once: further tasks wait (a task asking for more is refused).
  std::optional<std::int64_t> running_cores;
  OptionOrigin queued_tasks_at, running_cores_at;  // for refusal messages
};

// allocation: {slurm: {...}}: pilot jobs the instance submits when ready work waits.
struct ServeSlurmAllocation {
  std::string partition;  // empty: the default partition
  int max_jobs = 1;       // pilots at once
  int nodes = 1;          // per pilot
  Duration walltime = std::chrono::minutes(30);
  Duration idle_timeout = std::chrono::minutes(2);  // a pilot with nothing to run is released
  OptionOrigin at;                                  // the 'slurm' key
};

struct ServeConfig {
  std::string path;  // as named; empty = no file
  std::string queue, placement;
  OptionOrigin queue_at, placement_at;
  // The queue's and placement's options (`lane_cores`, `grace`, a model ...), located; which
  // policy takes each, and whether its value is right, is the policies' to say when the instance
  // builds them. `weights` is the top-level key below, not one of these.
  PolicyOptions policy_options;
  std::int64_t cores = 0;  // 0 = the machine's
  std::vector<std::string> admin_users, admin_groups;
  // TCP: tcp://IP:PORT (PORT * = any free one), and each user's allowed CURVE public keys (Z85).
  std::string listen;
  OptionOrigin listen_at;
  std::map<std::string, std::vector<std::string>> user_keys;
  std::optional<ServeSlurmAllocation> slurm_allocation;
  std::map<std::string, double> user_weights, group_weights;
  OptionOrigin weights_at;
  ServeLimits default_limits;
  std::map<std::string, ServeLimits> user_limits, group_limits;
};

// Errors: invalid_argument with one path:line:col line per problem.
Result<ServeConfig> parse_serve_config(std::string_view text, const std::string& path);
// Errors: not_found / io_error (the file), and parse_serve_config's.
Result<ServeConfig> load_serve_config(const std::string& path);

}  // namespace chorus
