#include "workflows/quorum_reader.hpp"

#include <charconv>
#include <cmath>
#include <map>

#include "workflows/sweep.hpp"

namespace chorus {
namespace {

constexpr std::int64_t kMaxQuorumMembers = 1'000'000;

// A whole number written as a plain scalar, or nullopt (the policy's own check reports others).
std::optional<double> number_of(const OptionEntry* e) {
  if (e == nullptr || e->value.kind != OptionValue::Kind::scalar) return std::nullopt;
  const std::string& t = e->value.text;
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Position at(const OptionOrigin& o) {
  return {o.line, o.column};
}

}  // namespace

std::string quorum_file_pattern(const std::string& workdir, const std::string& group) {
  std::string out = workdir;
  if (!out.empty() && out.back() != '/') out += '/';
  return out + "quorum/" + group + "/round-{round}.json";
}

std::optional<QuorumTemplate> read_quorum(const MapEntry& e, const std::string& task,
                                          DiagnosticList& diags) {
  const std::string where = "the quorum of task '" + task + "'";
  if (!e.value.IsMap()) {
    diags.add(e.value_pos, "'quorum' of task '" + task +
                               "' must be a map such as {policy: static, n: 16, k: 12}, got " +
                               describe_node(e.value));
    return std::nullopt;
  }
  const std::size_t before = diags.reports();
  QuorumTemplate q;
  q.pos = e.key_pos;
  q.choice.policy = kDefaultQuorumPolicy;
  q.policy_pos = e.key_pos;
  for (const MapEntry& item : map_entries(e.value, "in " + where, diags)) {
    if (item.key == "policy") {
      auto name = read_string(item, "'policy' in " + where, diags);
      if (!name) continue;
      if (name->empty()) {
        diags.add(item.value_pos, "'policy' in " + where + " must name a quorum policy");
        continue;
      }
      q.choice.policy = *name;
      q.policy_pos = item.value_pos;
    } else if (item.key == "n") {
      if (auto n = read_integer(item, "'n' in " + where, 1, kMaxQuorumMembers, diags)) {
        q.choice.n = static_cast<int>(*n);
        q.n_pos = item.value_pos;
      }
    } else {
      q.choice.options.entries.push_back({item.key,
                                          {diags.path(), item.key_pos.line, item.key_pos.column},
                                          option_value(item.value, item.value_pos, diags.path()),
                                          "quorum"});
    }
  }
  q.choice.policy_at = {diags.path(), q.policy_pos.line, q.policy_pos.column};
  if (diags.reports() != before) return std::nullopt;
  return q;
}

void check_quorums(std::vector<TaskTemplate>& templates,
                   const std::vector<std::string>& group_names, const QuorumCheck& check,
                   DiagnosticList& diags) {
  std::map<int, const TaskTemplate*> first_of_group;
  for (TaskTemplate& t : templates) {
    if (!t.quorum) continue;
    QuorumTemplate& q = *t.quorum;
    if (t.group == kNoGroup) {
      diags.add(q.pos, "'quorum' on task '" + t.name +
                           "' outside a round: a quorum closes a sweep inside a 'repeat:' group "
                           "early (move the task into a repeat group's 'tasks:')");
      continue;
    }
    const std::string& group = group_names[static_cast<std::size_t>(t.group)];
    auto [first, fresh] = first_of_group.emplace(t.group, &t);
    if (!fresh) {
      diags.add(q.pos, "repeat group '" + group + "' has a second quorum sweep, '" + t.name +
                           "' (the first is '" + first->second->name + "', line " +
                           std::to_string(first->second->quorum->pos.line) +
                           "): a group's rounds close on one quorum");
      continue;
    }
    // The group's `round` comes first in the sweep: the task's own foreach is the rest.
    if (t.sweep.size() <= 1) {
      diags.add(q.pos, "task '" + t.name +
                           "' has 'quorum' but is not a sweep: a quorum closes a round's foreach "
                           "of n members (add 'foreach:' to the task)");
      continue;
    }
    const std::uint64_t members = sweep_size(t.sweep);
    if (members > static_cast<std::uint64_t>(kMaxQuorumMembers)) {
      diags.add(q.pos, "task '" + t.name + "' has " + std::to_string(members) +
                           " members, more than a quorum takes (" +
                           std::to_string(kMaxQuorumMembers) + ")");
      continue;
    }
    const int n = static_cast<int>(members);
    if (q.choice.n != 0 && q.choice.n != n) {
      diags.add(q.n_pos,
                "'n' of the quorum of task '" + t.name + "' is " + std::to_string(q.choice.n) +
                    " but its foreach has " + std::to_string(n) + " members (line " +
                    std::to_string(t.sweep_pos.line) + "): n must be the sweep's member count");
      continue;
    }
    q.choice.n = n;
    const std::string where = " of the quorum of task '" + t.name + "'";
    bool bad = false;
    const OptionEntry* k = q.choice.options.find("k");
    if (auto v = number_of(k)) {
      if (*v > n) {
        diags.add(at(k->value.at),
                  "k " + k->value.text + where + " is more than its n = " + std::to_string(n) +
                      " members: a round cannot wait for " + "more results than it asked for");
        bad = true;
      } else if (*v < 1) {
        diags.add(at(k->value.at), "k " + k->value.text + where +
                                       " must be at least 1 (a round uses at least one result)");
        bad = true;
      }
    }
    const OptionEntry* b = q.choice.options.find("b");
    if (auto v = number_of(b); v && *v >= n) {
      diags.add(at(b->value.at), "b " + b->value.text + where +
                                     " leaves no result to wait for: backup workers must be "
                                     "fewer than n = " +
                                     std::to_string(n));
      bad = true;
    }
    if (bad || !check) continue;
    for (const OptionIssue& issue : check(q.choice.policy, q.choice.policy_at, q.choice.options)) {
      diags.add({issue.at.line, issue.at.column}, issue.message);
    }
  }
}

}  // namespace chorus
