// `quorum:` on a sweep inside a repeat group (docs/quorum-workflows.md): read with the task
// (read_quorum), checked once the whole file is read (check_quorums): the task must be a sweep
// of a repeat group, `n` its member count, `k` within 1..n, one quorum sweep per group, and the
// policy's name and options are the policy's business (PolicyRegistry::check_quorum, through a
// callback: workflows/ does not build policies).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/policy_options.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

// The policy a `quorum:` without `policy:` gets (it needs `k` or `b`).
inline constexpr const char* kDefaultQuorumPolicy = "static";

// The problems of a quorum policy's name and options, located (PolicyRegistry::check_quorum).
using QuorumCheck = std::function<std::vector<OptionIssue>(
    const std::string& policy, const OptionOrigin& at, const PolicyOptions& options)>;

// Reads `quorum: {policy: P, n: N, ...}` of task `task` (every key but policy and n is an option
// of the policy). nullopt when it reported a problem.
std::optional<QuorumTemplate> read_quorum(const MapEntry& e, const std::string& task,
                                          DiagnosticList& diags);

// Where the round driver writes what closed in each round of group `group`:
// <workdir>/quorum/<group>/round-{round}.json ({round} left for the round's number).
std::string quorum_file_pattern(const std::string& workdir, const std::string& group);

// Checks every template's quorum against its group and sweep, sets choice.n to the member count,
// and asks `check` (when set) about the policy. `group_names[g]` names repeat group g.
void check_quorums(std::vector<TaskTemplate>& templates,
                   const std::vector<std::string>& group_names, const QuorumCheck& check,
                   DiagnosticList& diags);

}  // namespace chorus
