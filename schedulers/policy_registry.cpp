#include "schedulers/policy_registry.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace chorus {
namespace {

template <typename Map>
std::vector<std::string> keys(const Map& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

std::vector<std::string> keys_of(const std::vector<OptionSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.key);
  std::sort(out.begin(), out.end());
  return out;
}

const OptionSpec* spec_of(const std::vector<OptionSpec>& specs, const std::string& key) {
  for (const auto& s : specs) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

// "a", "a and b", "a, b and c"
std::string and_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::string policy_label(const char* kind, const std::string& name) {
  return std::string(kind) + " '" + name + "'";
}

// Options a policy takes that a section does not hold: serve.yaml gives users' and groups' shares
// at its top level (`weights:`), not in `policy_options` (workflows/serve_config.cpp refuses
// them there), so its messages must not offer them.
bool written_elsewhere(const std::string& section, const std::string& key) {
  return section == "policy_options" && key == "weights";
}

// The options a message lists for an entry written in `section`.
std::string options_phrase(const std::vector<OptionSpec>& specs, const std::string& section) {
  std::vector<std::string> listed;
  for (std::string& k : keys_of(specs)) {
    if (!written_elsewhere(section, k)) listed.push_back(std::move(k));
  }
  return listed.empty() ? "none" : join(listed);
}

// The policies of `table` that take `key`, and the first one's spec of it.
template <typename Table>
std::pair<std::vector<std::string>, const OptionSpec*> taking(const Table& table,
                                                              const std::string& key) {
  std::pair<std::vector<std::string>, const OptionSpec*> out{{}, nullptr};
  for (const auto& [name, entry] : table) {
    if (const OptionSpec* s = spec_of(entry.options, key)) {
      out.first.push_back(name);
      if (out.second == nullptr) out.second = s;
    }
  }
  return out;
}

// "queue policy 'fifo' takes no option 'weights' (fair and uwfq do); its options: none", the
// value checked by the kind other policies give the key.
template <typename Table>
void refuse_option(const Table& table, const char* kind, const std::string& name,
                   const std::vector<OptionSpec>& specs, const OptionEntry& e,
                   std::vector<OptionIssue>& issues) {
  auto [others, spec] = taking(table, e.key);
  std::string why = policy_label(kind, name) + " takes no option '" + e.key + "'";
  why += others.empty() ? did_you_mean(e.key, keys_of(specs))
                        : " (" + and_list(others) + (others.size() == 1 ? " does)" : " do)");
  issues.push_back({e.key_at, why + "; its options: " + options_phrase(specs, e.section)});
  if (spec != nullptr) check_option_value(e, spec->kind, issues);
}

template <typename Table>
const typename Table::mapped_type* find_policy(const Table& table, const char* kind,
                                               const std::string& name, const OptionOrigin& at,
                                               std::vector<OptionIssue>& issues) {
  auto it = table.find(name);
  if (it != table.end()) return &it->second;
  auto known = keys(table);
  issues.push_back({at, "unknown " + std::string(kind) + " '" + name + "'" +
                            did_you_mean(name, known) + "; known: " + join(known)});
  return nullptr;
}

// Checks `options` (all the policy's own) and builds the policy; nullptr after adding issues.
template <typename Policy>
std::unique_ptr<Policy> build(const PolicyRegistry::Entry<Policy>& entry, const char* kind,
                              const std::string& name, const OptionOrigin& name_at,
                              const PolicyOptions& options, const PolicyContext& context,
                              std::vector<OptionIssue>& issues) {
  const std::size_t before = issues.size();
  for (const OptionEntry& e : options.entries) {
    if (const OptionSpec* s = spec_of(entry.options, e.key)) check_option_value(e, s->kind, issues);
  }
  if (issues.size() != before) return nullptr;
  PolicyArgs args(policy_label(kind, name), options, context, issues);
  auto made = entry.build(args);
  if (issues.size() != before) return nullptr;
  if (!made.ok()) {
    issues.push_back({name_at, made.status().message()});
    return nullptr;
  }
  if (*made == nullptr) issues.push_back({name_at, policy_label(kind, name) + " built nothing"});
  return std::move(*made);
}

template <typename Policy>
using Table = std::map<std::string, PolicyRegistry::Entry<Policy>>;

// One policy of `table` with its own options; nullptr after adding issues (`unknown` set when
// the name is not in the table).
template <typename Policy>
std::unique_ptr<Policy> make_located(const Table<Policy>& table, const char* kind,
                                     const std::string& name, const OptionOrigin& at,
                                     const PolicyOptions& options, const PolicyContext& context,
                                     std::vector<OptionIssue>& issues, bool& unknown) {
  const auto* entry = find_policy(table, kind, name, at, issues);
  unknown = entry == nullptr;
  if (entry == nullptr) return nullptr;
  const std::size_t before = issues.size();
  for (const OptionEntry& e : options.entries) {
    if (spec_of(entry->options, e.key) == nullptr)
      refuse_option(table, kind, name, entry->options, e, issues);
  }
  if (issues.size() != before) return nullptr;
  return build(*entry, kind, name, at, options, context, issues);
}

template <typename Policy>
Result<std::unique_ptr<Policy>> make_one(const Table<Policy>& table, const char* kind,
                                         const std::string& name, const PolicyOptions& options,
                                         const PolicyContext& context,
                                         const OptionOrigin& at = {}) {
  std::vector<OptionIssue> issues;
  bool unknown = false;
  auto policy = make_located(table, kind, name, at, options, context, issues, unknown);
  if (unknown) return not_found(format_issues(issues));
  if (!policy) return invalid_argument(format_issues(issues));
  return policy;
}

constexpr const char* kQueue = "queue policy";
constexpr const char* kPlacement = "placement policy";
constexpr const char* kQuorum = "quorum policy";

}  // namespace

PolicyRegistry PolicyRegistry::with_builtins() {
  PolicyRegistry r;
  register_builtin_policies(r);
  return r;
}

void PolicyRegistry::add_queue(std::string name, QueueFactory factory) {
  queues_[std::move(name)] = {
      {}, [f = std::move(factory)](PolicyArgs&) -> Result<std::unique_ptr<QueuePolicy>> {
        return f();
      }};
}

void PolicyRegistry::add_queue(std::string name, std::vector<OptionSpec> options,
                               QueueBuilder builder) {
  queues_[std::move(name)] = {std::move(options), std::move(builder)};
}

void PolicyRegistry::add_placement(std::string name, PlacementFactory factory) {
  placements_[std::move(name)] = {
      {}, [f = std::move(factory)](PolicyArgs&) -> Result<std::unique_ptr<PlacementPolicy>> {
        return f();
      }};
}

void PolicyRegistry::add_placement(std::string name, std::vector<OptionSpec> options,
                                   PlacementBuilder builder) {
  placements_[std::move(name)] = {std::move(options), std::move(builder)};
}

void PolicyRegistry::add_quorum(std::string name, QuorumFactory factory) {
  quorums_[std::move(name)] = {
      {}, [f = std::move(factory)](PolicyArgs&) -> Result<std::unique_ptr<QuorumPolicy>> {
        return f();
      }};
}

void PolicyRegistry::add_quorum(std::string name, std::vector<OptionSpec> options,
                                QuorumBuilder builder) {
  quorums_[std::move(name)] = {std::move(options), std::move(builder)};
}

Result<std::unique_ptr<QuorumPolicy>> PolicyRegistry::make_quorum(const std::string& name,
                                                                  const PolicyOptions& options,
                                                                  const PolicyContext& context,
                                                                  const OptionOrigin& at) const {
  return make_one(quorums_, kQuorum, name, options, context, at);
}

std::vector<OptionIssue> PolicyRegistry::check_quorum(const std::string& name,
                                                      const OptionOrigin& at,
                                                      const PolicyOptions& options) const {
  std::vector<OptionIssue> issues;
  bool unknown = false;
  make_located(quorums_, kQuorum, name, at, options, {}, issues, unknown);
  return issues;
}

Result<std::unique_ptr<QueuePolicy>> PolicyRegistry::make_queue(
    const std::string& name, const PolicyOptions& options, const PolicyContext& context) const {
  return make_one(queues_, kQueue, name, options, context);
}

Result<std::unique_ptr<PlacementPolicy>> PolicyRegistry::make_placement(
    const std::string& name, const PolicyOptions& options, const PolicyContext& context) const {
  return make_one(placements_, kPlacement, name, options, context);
}

namespace {

struct SectionOutcome {
  SchedulerPolicies policies;
  std::vector<OptionIssue> issues;
  bool unknown_name = false;
};

SectionOutcome build_section(const Table<QueuePolicy>& queues,
                             const Table<PlacementPolicy>& placements,
                             const SchedulerChoice& choice, const PolicyContext& context) {
  SectionOutcome out;
  const std::string queue = choice.queue.empty() ? kDefaultQueuePolicy : choice.queue;
  const std::string placement =
      choice.placement.empty() ? kDefaultPlacementPolicy : choice.placement;
  const auto* q = find_policy(queues, kQueue, queue, choice.queue_at, out.issues);
  const auto* p = find_policy(placements, kPlacement, placement, choice.placement_at, out.issues);
  if (q == nullptr || p == nullptr) {
    out.unknown_name = true;
    return out;  // whose options the others are is unknown
  }
  PolicyOptions queue_options, placement_options;
  for (const OptionEntry& e : choice.options.entries) {
    if (spec_of(q->options, e.key) != nullptr) {
      queue_options.entries.push_back(e);
    } else if (spec_of(p->options, e.key) != nullptr) {
      placement_options.entries.push_back(e);
    } else if (!taking(queues, e.key).first.empty()) {
      refuse_option(queues, kQueue, queue, q->options, e, out.issues);
    } else if (!taking(placements, e.key).first.empty()) {
      refuse_option(placements, kPlacement, placement, p->options, e, out.issues);
    } else {
      std::vector<std::string> known = scheduler_section_keys();
      for (const auto* specs : {&q->options, &p->options}) {
        for (const auto& k : keys_of(*specs)) {
          if (!written_elsewhere(e.section, k)) known.push_back(k);
        }
      }
      out.issues.push_back({e.key_at, "unknown key " + option_label(e) +
                                          did_you_mean(e.key, known) + "; options of " +
                                          policy_label(kQueue, queue) + ": " +
                                          options_phrase(q->options, e.section) + ", of " +
                                          policy_label(kPlacement, placement) + ": " +
                                          options_phrase(p->options, e.section)});
    }
  }
  // Each policy's own problems are found even when the other has some.
  out.policies.queue =
      build(*q, kQueue, queue, choice.queue_at, queue_options, context, out.issues);
  out.policies.placement =
      build(*p, kPlacement, placement, choice.placement_at, placement_options, context, out.issues);
  return out;
}

}  // namespace

Result<SchedulerPolicies> PolicyRegistry::make_policies(const SchedulerChoice& choice,
                                                        const PolicyContext& context) const {
  SectionOutcome out = build_section(queues_, placements_, choice, context);
  if (!out.issues.empty()) {
    const std::string message = format_issues(out.issues);
    return out.unknown_name ? not_found(message) : invalid_argument(message);
  }
  return std::move(out.policies);
}

std::vector<OptionIssue> PolicyRegistry::check(const SchedulerChoice& choice) const {
  return build_section(queues_, placements_, choice, {}).issues;
}

PolicyOptions PolicyRegistry::options_taken(const std::string& queue, const std::string& placement,
                                            const PolicyOptions& options) const {
  const auto q = queue_options(queue);
  const auto p = placement_options(placement);
  PolicyOptions out;
  for (const OptionEntry& e : options.entries) {
    if (spec_of(q, e.key) != nullptr || spec_of(p, e.key) != nullptr) out.entries.push_back(e);
  }
  return out;
}

std::vector<std::string> PolicyRegistry::queues_taking(const std::string& key) const {
  return taking(queues_, key).first;
}

std::vector<OptionSpec> PolicyRegistry::queue_options(const std::string& name) const {
  auto it = queues_.find(name);
  return it == queues_.end() ? std::vector<OptionSpec>{} : it->second.options;
}

std::vector<OptionSpec> PolicyRegistry::placement_options(const std::string& name) const {
  auto it = placements_.find(name);
  return it == placements_.end() ? std::vector<OptionSpec>{} : it->second.options;
}

std::vector<OptionSpec> PolicyRegistry::quorum_options(const std::string& name) const {
  auto it = quorums_.find(name);
  return it == quorums_.end() ? std::vector<OptionSpec>{} : it->second.options;
}

std::vector<std::string> PolicyRegistry::quorum_names() const {
  return keys(quorums_);
}

std::vector<std::string> PolicyRegistry::queue_names() const {
  return keys(queues_);
}
std::vector<std::string> PolicyRegistry::placement_names() const {
  return keys(placements_);
}

}  // namespace chorus
