#include "workflows/task_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include "core/runtime_partition.hpp"
#include "core/text.hpp"
#include "workflows/image_reference.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/placeholder.hpp"
#include "workflows/quorum_reader.hpp"

namespace chorus {
namespace {

constexpr std::int64_t kMaxCount = 1'000'000;  // cores or GPUs per task: beyond any node
constexpr std::int64_t kMaxRetries = 10'000;
// foreach lists and ranges are bounded by the workflow's task limit before expansion.
constexpr std::uint64_t kMaxSweepValues = 1'000'000;

const std::vector<std::string> kDefaultsKeys = {
    "cores",   "memory", "gpus", "retries", "timeout", "env",
    "workdir", "shell",  "uses", "data",    "image",   "image_pull_policy"};

const KeyChecker& task_keys() {
  static const KeyChecker checker(
      {"name",
       "command",
       "shell",
       "after",
       "foreach",
       "cores",
       "memory",
       "gpus",
       "env",
       "workdir",
       "retries",
       "timeout",
       "outputs",
       "inputs",
       "description",
       "estimate",
       "kind",
       "ranks",
       "cores_per_rank",
       "gpus_per_rank",
       "user",
       "uses",
       "job",
       "partition",
       "nodes",
       "data",
       "quorum",
       "image",
       "image_pull_policy"},
      {},
      {{"tasks", "tasks cannot be nested: list every task under the top-level 'tasks:'"},
       {"defaults", "'defaults' belongs at the top level, not in a task"}},
      // Keys of other workflow tools and schedulers, and what they are called here.
      {{"sweep", "for a sweep, use 'foreach: {i: \"range(0, 10)\"}' or 'foreach: {x: [a, b]}'"},
       {"matrix", "for a sweep, use 'foreach: {i: \"range(0, 10)\"}' or 'foreach: {x: [a, b]}'"},
       {"array", "for a task array, use 'foreach: {i: \"range(0, 10)\"}'"},
       {"depends_on", "for dependencies, use 'after: [names]'"},
       {"dependencies", "for dependencies, use 'after: [names]'"},
       {"needs", "for dependencies, use 'after: [names]'"},
       {"requires", "for dependencies, use 'after: [names]'"},
       {"threads", "for cores, use 'cores: N'"},
       {"cpus", "for cores, use 'cores: N'"},
       {"ntasks", "for MPI ranks, use 'kind: mpi' and 'ranks: N'"},
       {"walltime", "for a time limit, use 'timeout: 30m'"},
       {"time", "for a time limit, use 'timeout: 30m'"},
       {"run", "for what to run, use 'command: [prog, args]' (or a string, run by /bin/sh -c)"},
       {"script",
        "for what to run, use 'command: [prog, args]' (or a string, run by /bin/sh -c)"}});
  return checker;
}

const KeyChecker& defaults_keys() {
  static const KeyChecker checker = [] {
    std::vector<std::pair<std::string, std::string>> misplaced;
    for (const char* k :
         {"name", "command", "after", "foreach", "outputs", "inputs", "description", "estimate",
          "kind", "ranks", "cores_per_rank", "gpus_per_rank", "nodes", "job", "partition"}) {
      misplaced.emplace_back(k, "'" + std::string(k) + "' cannot be set in defaults (defaults " +
                                    "may hold " + join(kDefaultsKeys) + ")");
    }
    misplaced.emplace_back("user",
                           "'user' cannot be set in defaults: set it at the top level "
                           "(for every task) or in a task");
    return KeyChecker(kDefaultsKeys, {}, std::move(misplaced));
  }();
  return checker;
}

struct Partition {
  Duration work{0};
  Duration target{0};
  Position pos;  // the `partition` key
};

// `partition: {work: 30m, target: 0.5s}`: the task is divisible work of about `work` in all, to
// be run as pieces of about `target` each (core/runtime_partition.hpp).
std::optional<Partition> read_partition(const MapEntry& e, const std::string& where,
                                        DiagnosticList& diags) {
  const std::string usage = "a map such as {work: 30m, target: 0.5s}";
  if (!e.value.IsMap()) {
    diags.add(e.value_pos,
              "'partition' " + where + " must be " + usage + ", got " + describe_node(e.value));
    return std::nullopt;
  }
  static const KeyChecker checker({"work", "target"}, {});
  Partition p;
  p.pos = e.key_pos;
  bool ok = true;
  for (const MapEntry& k : checker.check(e.value, "in the partition " + where, diags)) {
    const std::string label = "'partition." + k.key + "' " + where;
    auto d = read_duration(k, label, diags);
    if (!d) {
      ok = false;
    } else if (*d <= Duration::zero()) {
      diags.add(k.value_pos, label + " must be a positive duration, got " + k.value.Scalar());
      ok = false;
    } else {
      (k.key == "work" ? p.work : p.target) = *d;
    }
  }
  for (const char* k : {"work", "target"}) {
    if (ok && (k[0] == 'w' ? p.work : p.target) == Duration::zero()) {
      diags.add(e.value_pos, "'partition' " + where + " needs '" + k + "' (" + usage + ")");
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return p;
}

// `job: train` or `job: {name: train, weight: 2}`: the job the task belongs to for the fair-share
// policies, and the job's weight w_j within its user (uwfq) or among jobs (cfq).
void read_job(const MapEntry& e, const std::string& where, TaskTemplate& t, DiagnosticList& diags) {
  if (!e.value.IsMap()) {
    if (auto j = read_string(e, "'job' " + where, diags)) {
      if (j->empty()) {
        diags.add(e.value_pos, "'job' " + where + " must not be empty");
      } else {
        t.job = *j;
      }
    }
    return;
  }
  static const KeyChecker checker({"name", "weight"}, {});
  bool named = false;
  for (const MapEntry& k : checker.check(e.value, "in the job " + where, diags)) {
    const std::string label = "'job." + k.key + "' " + where;
    if (k.key == "name") {
      if (auto j = read_string(k, label, diags)) {
        if (j->empty()) {
          diags.add(k.value_pos, label + " must not be empty");
        } else {
          t.job = *j;
        }
      }
      named = true;
      continue;
    }
    double w = 0;
    bool number = k.value.IsScalar();
    if (number) {
      const std::string& text = k.value.Scalar();
      char* end = nullptr;
      w = std::strtod(text.c_str(), &end);
      number = !text.empty() && end == text.c_str() + text.size() && std::isfinite(w);
    }
    if (!number || !(w > 0)) {
      diags.add(k.value_pos,
                label + " must be a positive number such as 2, got " + describe_node(k.value));
    } else {
      t.job_weight = w;
      t.job_weight_pos = k.value_pos;
    }
  }
  if (!named) {
    diags.add(e.value_pos, "'job' " + where +
                               " needs a 'name' (the weight belongs to a named job): "
                               "job: {name: train, weight: 2}");
  }
}

// `uses: [a, b]` or `uses: a`: service names, checked against `services:` by the graph builder.
std::optional<std::vector<LocatedText>> read_uses(const MapEntry& e, const std::string& label,
                                                  DiagnosticList& diags) {
  auto list = read_string_list(e, label, true, diags);
  if (!list) return std::nullopt;
  bool ok = true;
  for (const auto& u : *list) {
    if (u.text.empty()) {
      diags.add(u.pos, "an empty service name in " + label);
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return list;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string name_problem(const std::string& name, const std::string& what) {
  if (name.empty() ||
      std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) != 0; })) {
    return "a " + what + " name must not be empty";
  }
  for (char c : name) {
    if (c == '[' || c == ']' || c == '/') {
      return what + " name '" + name + "' must not contain '[', ']' or '/'" +
             (c == '/' ? "" : " (sweep members get '[...]' added to their name)");
    }
    if (c == '{' || c == '}') {
      return what + " name '" + name + "' must not contain '{' or '}' (they would read as " +
             "placeholders where the name is used in 'after')";
    }
    if (std::iscntrl(static_cast<unsigned char>(c))) {
      return what + " name '" + name + "' must not contain control characters";
    }
  }
  return {};
}

void read_common(const MapEntry& e, const std::string& where, Resources& r, Position& cores_pos,
                 Position& memory_pos, Position& gpus_pos, int& retries, Duration& timeout,
                 DiagnosticList& diags) {
  const std::string label = "'" + e.key + "' " + where;
  if (e.key == "cores") {
    if (auto v = read_integer(e, label, 1, kMaxCount, diags)) {
      r.cores = static_cast<int>(*v);
      cores_pos = e.value_pos;
    }
  } else if (e.key == "gpus") {
    if (auto v = read_integer(e, label, 0, kMaxCount, diags)) {
      r.gpus = static_cast<int>(*v);
      gpus_pos = e.value_pos;
    }
  } else if (e.key == "memory") {
    if (auto v = read_memory_mb(e, label, diags)) {
      r.memory_mb = *v;
      memory_pos = e.value_pos;
    }
  } else if (e.key == "retries") {
    if (auto v = read_integer(e, label, 0, kMaxRetries, diags)) retries = static_cast<int>(*v);
  } else if (e.key == "timeout") {
    if (auto v = read_duration(e, label, diags)) timeout = *v;
  }
}

namespace {

std::optional<std::vector<SweepVariable>> read_foreach(const MapEntry& e, const std::string& task,
                                                       DiagnosticList& diags) {
  const std::string usage =
      "\"range(start, stop)\", \"range(start, stop, step)\" or a list of values";
  if (!e.value.IsMap() || e.value.size() == 0) {
    diags.add(e.value_pos, "'foreach' in task '" + task + "' must be a map of variable: " + usage +
                               ", got " +
                               (e.value.IsMap() ? "an empty map" : describe_node(e.value)));
    return std::nullopt;
  }
  std::vector<SweepVariable> vars;
  bool ok = true;
  for (const MapEntry& v : map_entries(e.value, "in the foreach of task '" + task + "'", diags)) {
    if (!is_identifier(v.key)) {
      diags.add(v.key_pos, "foreach variable '" + v.key + "' in task '" + task +
                               "' must be a name of letters, digits and '_' (it is used as {" +
                               v.key + "})");
      ok = false;
      continue;
    }
    SweepVariable var{v.key, {}};
    const std::string label = "foreach '" + v.key + "' in task '" + task + "'";
    if (v.value.IsScalar()) {
      auto values = expand_range(v.value.Scalar(), kMaxSweepValues);
      if (!values.ok()) {
        diags.add(v.value_pos, label + ": " + values.status().message());
        ok = false;
        continue;
      }
      var.values = std::move(*values);
    } else if (v.value.IsSequence()) {
      if (v.value.size() == 0) {
        diags.add(v.value_pos, label + " has no values");
        ok = false;
        continue;
      }
      if (v.value.size() > kMaxSweepValues) {
        diags.add(v.value_pos, label + " has more than " + std::to_string(kMaxSweepValues) +
                                   " values, the limit of tasks per workflow");
        ok = false;
        continue;
      }
      std::unordered_map<std::string, int> seen;
      for (const YAML::Node& item : v.value) {
        Position pos = item_position(item, diags, v.value_pos);
        if (!item.IsScalar()) {
          diags.add(pos, "each value of " + label + " must be a single value, got " +
                             describe_node(item));
          ok = false;
          continue;
        }
        if (Status s = check_sweep_value(item.Scalar()); !s.ok()) {
          diags.add(pos, label + ": " + s.message());
          ok = false;
          continue;
        }
        auto [first, fresh] = seen.emplace(item.Scalar(), pos.line);
        if (!fresh) {
          diags.add(pos, label + " lists '" + item.Scalar() + "' twice (first on line " +
                             std::to_string(first->second) + ")");
          ok = false;
          continue;
        }
        var.values.push_back(item.Scalar());
      }
    } else {
      diags.add(v.value_pos, label + " must be " + usage + ", got " + describe_node(v.value));
      ok = false;
      continue;
    }
    vars.push_back(std::move(var));
  }
  if (!ok) return std::nullopt;
  return vars;
}

}  // namespace

bool read_image_key(const MapEntry& e, const std::string& where, std::optional<LocatedText>& image,
                    std::optional<LocatedText>& policy, DiagnosticList& diags) {
  if (e.key != "image" && e.key != "image_pull_policy") return false;
  auto text = read_string(e, "'" + e.key + "' " + where, diags);
  if (!text) return true;
  if (e.key == "image_pull_policy") {
    if (!is_image_pull_policy(*text)) {
      diags.add(e.value_pos, "image_pull_policy " + where +
                                 " must be Always, IfNotPresent or Never, not '" + *text + "'" +
                                 did_you_mean(*text, {"Always", "IfNotPresent", "Never"}));
    } else {
      policy = LocatedText{*text, e.value_pos};
    }
    return true;
  }
  if (!has_braces(*text)) {
    if (std::string why = image_reference_problem(*text); !why.empty()) {
      diags.add(e.value_pos,
                "image '" + *text + "' " + where + " is not an image reference: " + why);
      return true;
    }
  }
  image = LocatedText{*text, e.value_pos};
  return true;
}

bool read_command(const MapEntry* e, Position task_pos, bool shell, bool shell_explicit,
                  const std::string& what, TaskTemplate& t, DiagnosticList& diags) {
  const std::string label = "'command' of " + what + " '" + t.name + "'";
  if (e == nullptr) {
    diags.add(task_pos, what + " '" + t.name + "' has no 'command'");
    return false;
  }
  if (e->value.IsScalar()) {
    const std::string& s = e->value.Scalar();
    if (std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; })) {
      diags.add(e->value_pos, label + " is empty");
      return false;
    }
    if (shell_explicit && !shell) {
      diags.add(e->value_pos, label +
                                  " is a string, which always runs under /bin/sh -c; write it "
                                  "as a list to run it without a shell");
      return false;
    }
    t.shell = true;
    t.shell_command = {s, e->value_pos};
    return true;
  }
  if (e->value.IsSequence()) {
    if (e->value.size() == 0) {
      diags.add(e->value_pos, label + " is an empty list");
      return false;
    }
    auto items = read_string_list(*e, label, false, diags);
    if (!items) return false;
    if (items->front().text.empty()) {
      diags.add(items->front().pos, label + " starts with an empty program name");
      return false;
    }
    t.shell = shell;
    t.argv = std::move(*items);
    return true;
  }
  if (e->value.IsNull()) {
    diags.add(e->value_pos, label + " is empty");
  } else {
    diags.add(e->value_pos, label +
                                " must be a string (run by /bin/sh -c) or a list (an argv), got " +
                                describe_node(e->value));
  }
  return false;
}

void set_env(EnvEntries& env, const std::string& key, LocatedText value) {
  for (auto& [k, v] : env) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  env.emplace_back(key, std::move(value));
}

TaskDefaults read_defaults(const MapEntry* entry, TaskDefaults base, DiagnosticList& diags) {
  if (entry == nullptr || entry->value.IsNull()) return base;
  if (!entry->value.IsMap()) {
    diags.add(entry->value_pos, "'defaults' must be a map, got " + describe_node(entry->value));
    return base;
  }
  for (const MapEntry& e : defaults_keys().check(entry->value, "in defaults", diags)) {
    if (e.key == "env") {
      if (auto env = read_env_map(e, "the env of defaults", diags)) {
        for (auto& [k, v] : *env) set_env(base.env, k, std::move(v));
      }
    } else if (e.key == "workdir") {
      if (auto w = read_string(e, "'workdir' in defaults", diags)) {
        base.workdir = LocatedText{*w, e.value_pos};
      }
    } else if (e.key == "shell") {
      if (auto b = read_bool(e, "'shell' in defaults", diags)) base.shell = *b;
    } else if (e.key == "uses") {
      if (auto list = read_uses(e, "'uses' in defaults", diags)) base.uses = std::move(*list);
    } else if (read_image_key(e, "in defaults", base.image, base.image_pull_policy, diags)) {
    } else if (e.key == "data") {
      static const std::vector<DataSource> kNone;
      base.data = read_data(e, "in defaults", base.data,
                            base.sources != nullptr ? *base.sources : kNone, diags);
    } else {
      read_common(e, "in defaults", base.per_rank, base.cores_pos, base.memory_pos, base.gpus_pos,
                  base.retries, base.timeout, diags);
    }
  }
  return base;
}

// Turns a partitioned task into a sweep over `part` = 0..n-1 (after its own foreach variables),
// each piece estimated at work / n, with CHORUS_PARTS = n in its environment; its pieces are one
// job (named like the task unless `job:` says otherwise) for the fair-share policies.
bool apply_partition(const Partition& p, const MapEntry* estimate, const std::string& where,
                     TaskTemplate& t, DiagnosticList& diags) {
  if (estimate != nullptr) {
    diags.add(estimate->key_pos, "'estimate' " + where +
                                     " conflicts with 'partition': each piece is estimated at "
                                     "work / pieces; drop 'estimate'");
    return false;
  }
  for (const auto& v : t.sweep) {
    if (v.name == "part") {
      diags.add(t.sweep_pos, "foreach variable 'part' " + where +
                                 " is taken by 'partition' (its pieces are {part})");
      return false;
    }
  }
  const double work = std::chrono::duration<double>(p.work).count();
  const std::uint64_t n = partition_count(work, std::chrono::duration<double>(p.target).count());
  if (n > kMaxSweepValues) {
    diags.add(p.pos, "'partition' " + where + " makes " + std::to_string(n) +
                         " pieces, more than the " + std::to_string(kMaxSweepValues) +
                         " tasks a workflow may have; raise 'target'");
    return false;
  }
  SweepVariable part{"part", {}};
  part.values.reserve(n);
  for (std::uint64_t k = 0; k < n; ++k) part.values.push_back(std::to_string(k));
  if (t.sweep.empty()) t.sweep_pos = p.pos;
  t.sweep.push_back(std::move(part));
  t.estimate = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(work / static_cast<double>(n)));
  set_env(t.env, "CHORUS_PARTS", LocatedText{std::to_string(n), p.pos});
  return true;
}

std::optional<TaskTemplate> read_task(const YAML::Node& node, std::size_t index,
                                      const TaskDefaults& defaults, TextBudget& budget,
                                      DiagnosticList& diags) {
  const Position task_pos = item_position(node, diags);
  const std::string numbered = "task #" + std::to_string(index + 1);
  if (!node.IsMap()) {
    diags.add(task_pos, numbered + " must be a map with at least 'name' and 'command', got " +
                            describe_node(node));
    return std::nullopt;
  }
  const std::size_t before = diags.reports();
  TaskTemplate t;
  t.pos = task_pos;
  // The name is needed for messages about the other keys; operator[] on a const map without the
  // key would give an invalid node, so look for it by iterating.
  bool named = false;
  for (auto it = node.begin(); it != node.end() && !named; ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar() &&
        name_problem(it->second.Scalar(), "task").empty()) {
      named = true;
      t.name = it->second.Scalar();
    }
  }
  if (!named) t.name = numbered;
  const std::string context = "in task '" + t.name + "'";
  const std::string where = named ? context : "in " + numbered;

  const std::vector<MapEntry> entries = task_keys().check(node, where, diags);
  bool ok = true;
  const MapEntry* name = find_entry(entries, "name");
  if (name == nullptr) {
    diags.add(task_pos, numbered + " has no 'name'");
    ok = false;
  } else if (!name->value.IsScalar()) {
    diags.add(name->value_pos,
              "the name of " + numbered + " must be a string, got " + describe_node(name->value));
    ok = false;
  } else if (std::string why = name_problem(name->value.Scalar(), "task"); !why.empty()) {
    diags.add(name->value_pos, why);
    ok = false;
  } else {
    t.pos = name->value_pos;
  }

  bool shell = defaults.shell;
  bool shell_explicit = false;
  if (const MapEntry* e = find_entry(entries, "shell")) {
    if (auto b = read_bool(*e, "'shell' " + where, diags)) {
      shell = *b;
      shell_explicit = true;
    } else {
      ok = false;
    }
  }
  ok = read_command(find_entry(entries, "command"), t.pos, shell, shell_explicit, "task", t,
                    diags) &&
       ok;

  t.per_rank = defaults.per_rank;
  t.cores_pos = defaults.cores_pos;
  t.memory_pos = defaults.memory_pos;
  t.gpus_pos = defaults.gpus_pos;
  t.retries = defaults.retries;
  t.timeout = defaults.timeout;
  t.env = defaults.env;
  t.workdir = defaults.workdir;
  t.user = defaults.user;
  t.uses = defaults.uses;
  if (defaults.data) t.data = defaults.data->data;
  t.image = defaults.image;
  t.image_pull_policy = defaults.image_pull_policy;
  std::optional<Partition> partition;
  for (const MapEntry& e : entries) {
    const std::string label = "'" + e.key + "' " + where;
    if (e.key == "after") {
      if (auto list = read_string_list(e, label, true, diags)) {
        for (auto& a : *list) {
          if (a.text.empty()) {
            diags.add(a.pos, "an empty task name in " + label);
          } else {
            t.after.push_back(std::move(a));
          }
        }
      }
    } else if (e.key == "uses") {
      if (auto list = read_uses(e, label, diags)) t.uses = std::move(*list);
    } else if (e.key == "data") {
      static const std::vector<DataSource> kNone;
      if (auto d = read_data(e, where, defaults.data,
                             defaults.sources != nullptr ? *defaults.sources : kNone, diags)) {
        t.data = d->data;
      }
    } else if (read_image_key(e, where, t.image, t.image_pull_policy, diags)) {
    } else if (e.key == "quorum") {
      if (auto q = read_quorum(e, t.name, diags)) t.quorum = std::move(*q);
    } else if (e.key == "foreach") {
      if (auto vars = read_foreach(e, t.name, diags)) {
        t.sweep = std::move(*vars);
        t.sweep_pos = e.key_pos;
      }
    } else if (e.key == "env") {
      if (auto env = read_env_map(e, "the env of task '" + t.name + "'", diags)) {
        for (auto& [k, v] : *env) set_env(t.env, k, std::move(v));
      }
    } else if (e.key == "workdir") {
      if (auto w = read_string(e, label, diags)) t.workdir = LocatedText{*w, e.value_pos};
    } else if (e.key == "outputs" || e.key == "inputs") {
      if (auto list = read_string_list(e, label, true, diags)) {
        (e.key == "outputs" ? t.outputs : t.inputs) = std::move(*list);
      }
    } else if (e.key == "estimate") {
      if (auto d = read_duration(e, label, diags)) t.estimate = *d;
    } else if (e.key == "description") {
      (void)read_string(e, label, diags);
    } else if (e.key == "job") {
      read_job(e, where, t, diags);
    } else if (e.key == "partition") {
      partition = read_partition(e, where, diags);
    } else if (e.key == "user") {
      if (auto u = read_string(e, label, diags)) {
        if (u->empty()) {
          diags.add(e.value_pos, "'user' " + where + " must not be empty");
        } else {
          t.user = *u;
        }
      }
    } else if (e.key == "ranks") {
      if (auto v = read_integer(e, label, 1, kMaxCount, diags)) {
        t.ranks = static_cast<int>(*v);
        t.ranks_pos = e.value_pos;
      } else {
        t.ranks_pos = e.value_pos;
      }
    } else if (e.key == "nodes") {
      if (auto v = read_integer(e, label, 1, kMaxCount, diags)) t.nodes = static_cast<int>(*v);
      t.nodes_pos = e.value_pos;
    } else if (e.key == "cores_per_rank") {
      if (auto v = read_integer(e, label, 1, kMaxCount, diags)) {
        t.per_rank.cores = static_cast<int>(*v);
        t.cores_pos = e.value_pos;
      }
    } else if (e.key == "gpus_per_rank") {
      if (auto v = read_integer(e, label, 0, kMaxCount, diags)) {
        t.per_rank.gpus = static_cast<int>(*v);
        t.gpus_pos = e.value_pos;
      }
    } else if (e.key == "kind") {
      auto kind = read_string(e, label, diags);
      if (!kind || *kind == "executable") continue;
      if (*kind == "mpi") {
        t.kind = TaskKind::mpi;
        t.kind_pos = e.value_pos;
      } else if (*kind == "service") {
        diags.add(e.value_pos,
                  "kind 'service' is not a task kind: declare services under the "
                  "top-level 'services:' and name them in the task's 'uses:'");
      } else if (*kind == "function") {
        diags.add(e.value_pos, "kind 'function' is only available from the C++ API");
      } else {
        diags.add(e.value_pos, "unknown kind '" + *kind + "' " + where +
                                   did_you_mean(*kind, {"executable", "mpi"}));
      }
    } else {
      read_common(e, where, t.per_rank, t.cores_pos, t.memory_pos, t.gpus_pos, t.retries, t.timeout,
                  diags);
    }
  }
  if (t.kind != TaskKind::mpi) {
    for (const char* k : {"ranks", "cores_per_rank", "gpus_per_rank", "nodes"}) {
      if (const MapEntry* e = find_entry(entries, k)) {
        diags.add(e->key_pos, "'" + std::string(k) + "' " + where +
                                  " needs 'kind: mpi' (only MPI tasks have ranks)");
      }
    }
  } else if (t.nodes > t.ranks) {
    diags.add(t.nodes_pos, "'nodes: " + std::to_string(t.nodes) + "' " + where +
                               " is more than its " + std::to_string(t.ranks) +
                               " ranks: every node needs at least one rank");
  }
  if (partition)
    ok = apply_partition(*partition, find_entry(entries, "estimate"), where, t, diags) && ok;
  if (diags.reports() != before) ok = false;
  if (!budget.add_read(t, named ? "task '" + t.name + "'" : numbered, diags)) ok = false;
  if (!ok) return std::nullopt;
  // A task entry is one job for the fair-share policies (a sweep's members together, as a task
  // array is one job), unless `job:` groups entries otherwise.
  if (t.job.empty()) t.job = t.name;
  return t;
}

}  // namespace chorus
