#include "workflows/service_reader.hpp"

#include <cmath>
#include <cstdlib>

#include "core/line_pattern.hpp"
#include "core/text.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/task_reader.hpp"

namespace chorus {
namespace {

constexpr std::int64_t kMaxReplicas = 10'000;
constexpr std::int64_t kMaxRestarts = 10'000;

const KeyChecker& service_keys() {
  static const KeyChecker checker = [] {
    std::vector<std::pair<std::string, std::string>> misplaced = {
        {"foreach",
         "services have no 'foreach': use 'replicas: N' for N copies ({replica} "
         "tells them apart)"},
        {"after",
         "services cannot wait for tasks: a service starts with the run, and tasks "
         "wait for it with 'uses:'"},
        {"retries",
         "services are not retried: restarts are set by 'restart: {policy: "
         "on-failure, max: 3}'"},
        {"timeout",
         "services run until no task needs them: the time to become ready is "
         "'ready: {timeout: 60s}', the time to stop 'stop_grace:'"},
        {"uses", "a service cannot use another service"},
        {"kind", "every entry of 'services:' is a service: leave 'kind' out"},
        {"tasks", "tasks belong in the top-level 'tasks:' list, not in a service"}};
    for (const char* k : {"ranks", "cores_per_rank", "gpus_per_rank"}) {
      misplaced.emplace_back(k, "'" + std::string(k) +
                                    "' is for MPI tasks: a service replica is one process "
                                    "(use 'replicas:' for several)");
    }
    for (const char* k : {"outputs", "inputs", "estimate"}) {
      misplaced.emplace_back(k, "'" + std::string(k) + "' is a task key, not a service key");
    }
    return KeyChecker(
        {"name", "command", "shell", "cores", "memory", "gpus", "env", "workdir", "user",
         "description", "replicas", "ready", "restart", "stop_grace", "image", "image_pull_policy"},
        {}, std::move(misplaced));
  }();
  return checker;
}

const KeyChecker& ready_keys() {
  static const KeyChecker checker({"tcp", "http", "stdout", "file", "path", "timeout", "interval"},
                                  {});
  return checker;
}

const KeyChecker& restart_keys() {
  static const KeyChecker checker({"policy", "max", "backoff", "factor", "max_backoff"}, {});
  return checker;
}

std::string format_number(double v) {
  std::string s = std::to_string(v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::optional<double> read_number(const MapEntry& e, const std::string& label, double min,
                                  DiagnosticList& diags) {
  if (e.value.IsScalar() && !is_quoted(e.value)) {
    const std::string& s = e.value.Scalar();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v) && v >= min) return v;
  }
  diags.add(e.value_pos, label + " must be a number of at least " + format_number(min) + ", got " +
                             describe_node(e.value));
  return std::nullopt;
}

std::optional<Duration> read_positive_duration(const MapEntry& e, const std::string& label,
                                               DiagnosticList& diags) {
  auto d = read_duration(e, label, diags);
  if (d && d->count() <= 0) {
    diags.add(e.value_pos, label + " must be longer than 0");
    return std::nullopt;
  }
  return d;
}

void read_ready(const MapEntry& e, const std::string& service, ServiceTemplate& out,
                DiagnosticList& diags) {
  const std::string where = "in the 'ready' probe of service '" + service + "'";
  const std::string usage =
      "{tcp: PORT}, {http: PORT, path: /health}, {stdout: REGEX} or "
      "{file: PATH}";
  out.ready_pos = e.value_pos;
  if (!e.value.IsMap()) {
    diags.add(e.value_pos, "'ready' of service '" + service + "' must be a map: " + usage +
                               ", got " + describe_node(e.value));
    return;
  }
  ReadyProbe& probe = out.spec.ready;
  const MapEntry* kind = nullptr;
  const MapEntry* path = nullptr;
  const std::vector<MapEntry> entries = ready_keys().check(e.value, where, diags);
  for (const MapEntry& k : entries) {
    const std::string label = "'" + k.key + "' " + where;
    if (k.key == "tcp" || k.key == "http" || k.key == "stdout" || k.key == "file") {
      if (kind != nullptr) {
        diags.add(k.key_pos, "the 'ready' probe of service '" + service + "' has two kinds ('" +
                                 kind->key + "' and '" + k.key + "'); keep one");
        continue;
      }
      kind = &k;
      if (k.key == "tcp" || k.key == "http") {
        probe.kind = k.key == "tcp" ? ProbeKind::tcp : ProbeKind::http;
        if (auto port = read_integer(k, label, 1, 65535, diags))
          probe.port = static_cast<int>(*port);
        out.port_pos = k.value_pos;
      } else if (k.key == "stdout") {
        probe.kind = ProbeKind::stdout_regex;
        auto re = read_string(k, label, diags);
        if (!re) continue;
        if (re->empty()) {
          diags.add(k.value_pos, label + " must be a regular expression");
          continue;
        }
        if (auto compiled = LinePattern::compile(*re)) {
          probe.regex = *re;
        } else {
          diags.add(k.value_pos, label + ": " + compiled.status().message());
        }
      } else {
        probe.kind = ProbeKind::file;
        auto f = read_string(k, label, diags);
        if (f && f->empty()) diags.add(k.value_pos, label + " must name a file");
        if (f) probe.path = *f;
      }
    } else if (k.key == "path") {
      path = &k;
    } else if (k.key == "timeout") {
      if (auto d = read_positive_duration(k, label, diags)) out.spec.startup_timeout = *d;
    } else if (k.key == "interval") {
      if (auto d = read_positive_duration(k, label, diags)) probe.interval = *d;
    }
  }
  if (kind == nullptr) {
    diags.add(e.value_pos,
              "the 'ready' probe of service '" + service + "' names no check: use " + usage);
    return;
  }
  if (path != nullptr) {
    if (kind->key != "http") {
      diags.add(path->key_pos, "'path' " + where + " only applies to an http probe");
    } else if (auto p = read_string(*path, "'path' " + where, diags)) {
      if (!p->starts_with('/')) {
        diags.add(path->value_pos, "'path' " + where + " must start with '/', got '" + *p + "'");
      } else {
        probe.path = *p;
      }
    }
  } else if (probe.kind == ProbeKind::http) {
    probe.path = "/";
  }
}

void read_restart(const MapEntry& e, const std::string& service, RestartPolicy& out,
                  DiagnosticList& diags) {
  const std::string where = "in the 'restart' of service '" + service + "'";
  if (!e.value.IsMap()) {
    diags.add(e.value_pos, "'restart' of service '" + service +
                               "' must be a map such as {policy: on-failure, max: 3}, got " +
                               describe_node(e.value));
    return;
  }
  for (const MapEntry& k : restart_keys().check(e.value, where, diags)) {
    const std::string label = "'" + k.key + "' " + where;
    if (k.key == "policy") {
      auto p = read_string(k, label, diags);
      if (!p) continue;
      if (*p == "never") {
        out.when = RestartWhen::never;
      } else if (*p == "on-failure") {
        out.when = RestartWhen::on_failure;
      } else if (*p == "always") {
        out.when = RestartWhen::always;
      } else {
        diags.add(k.value_pos, "unknown restart policy '" + *p + "' " + where +
                                   " (use never, on-failure or always)" +
                                   did_you_mean(*p, {"never", "on-failure", "always"}));
      }
    } else if (k.key == "max") {
      if (auto v = read_integer(k, label, 0, kMaxRestarts, diags))
        out.max_restarts = static_cast<int>(*v);
    } else if (k.key == "backoff") {
      if (auto d = read_duration(k, label, diags)) out.backoff = *d;
    } else if (k.key == "max_backoff") {
      if (auto d = read_duration(k, label, diags)) out.max_backoff = *d;
    } else if (k.key == "factor") {
      if (auto f = read_number(k, label, 1.0, diags)) out.factor = *f;
    }
  }
}

std::optional<ServiceTemplate> read_service(const YAML::Node& node, std::size_t index,
                                            const TaskDefaults& defaults, TextBudget& budget,
                                            DiagnosticList& diags) {
  const Position pos = item_position(node, diags);
  const std::string numbered = "service #" + std::to_string(index + 1);
  if (!node.IsMap()) {
    diags.add(pos, numbered + " must be a map with at least 'name', 'command' and 'ready', got " +
                       describe_node(node));
    return std::nullopt;
  }
  const std::size_t before = diags.reports();
  ServiceTemplate s;
  TaskTemplate& t = s.task;
  t.kind = TaskKind::service;
  t.pos = pos;
  t.name = numbered;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar() &&
        name_problem(it->second.Scalar(), "service").empty()) {
      t.name = it->second.Scalar();
      break;
    }
  }
  const bool named = t.name != numbered;
  const std::string where = named ? "in service '" + t.name + "'" : "in " + numbered;
  const std::vector<MapEntry> entries = service_keys().check(node, where, diags);
  const MapEntry* name = find_entry(entries, "name");
  if (name == nullptr) {
    diags.add(pos, numbered + " has no 'name'");
  } else if (!name->value.IsScalar()) {
    diags.add(name->value_pos,
              "the name of " + numbered + " must be a string, got " + describe_node(name->value));
  } else if (std::string why = name_problem(name->value.Scalar(), "service"); !why.empty()) {
    diags.add(name->value_pos, why);
  } else {
    t.pos = name->value_pos;
  }
  s.spec.name = t.name;
  s.spec.line = t.pos.line;
  s.spec.column = t.pos.column;

  bool shell = defaults.shell;
  bool shell_explicit = false;
  if (const MapEntry* e = find_entry(entries, "shell")) {
    if (auto b = read_bool(*e, "'shell' " + where, diags)) {
      shell = *b;
      shell_explicit = true;
    }
  }
  (void)read_command(find_entry(entries, "command"), t.pos, shell, shell_explicit, "service", t,
                     diags);
  t.per_rank = defaults.per_rank;
  t.cores_pos = defaults.cores_pos;
  t.memory_pos = defaults.memory_pos;
  t.gpus_pos = defaults.gpus_pos;
  t.env = defaults.env;
  t.workdir = defaults.workdir;
  t.user = defaults.user;
  t.image = defaults.image;
  t.image_pull_policy = defaults.image_pull_policy;
  const MapEntry* ready = nullptr;
  for (const MapEntry& e : entries) {
    const std::string label = "'" + e.key + "' " + where;
    if (read_image_key(e, where, t.image, t.image_pull_policy, diags)) {
    } else if (e.key == "env") {
      if (auto env = read_env_map(e, "the env of service '" + t.name + "'", diags)) {
        for (auto& [k, v] : *env) set_env(t.env, k, std::move(v));
      }
    } else if (e.key == "workdir") {
      if (auto w = read_string(e, label, diags)) t.workdir = LocatedText{*w, e.value_pos};
    } else if (e.key == "user") {
      if (auto u = read_string(e, label, diags)) {
        if (u->empty()) {
          diags.add(e.value_pos, label + " must not be empty");
        } else {
          t.user = *u;
        }
      }
    } else if (e.key == "description") {
      (void)read_string(e, label, diags);
    } else if (e.key == "replicas") {
      if (auto v = read_integer(e, label, 1, kMaxReplicas, diags)) {
        s.spec.replicas = static_cast<int>(*v);
      }
    } else if (e.key == "ready") {
      ready = &e;
      read_ready(e, t.name, s, diags);
    } else if (e.key == "restart") {
      read_restart(e, t.name, s.spec.restart, diags);
    } else if (e.key == "stop_grace") {
      if (auto d = read_duration(e, label, diags)) s.spec.stop_grace = *d;
    } else if (e.key == "cores" || e.key == "memory" || e.key == "gpus") {
      int retries = 0;
      Duration timeout{0};
      read_common(e, where, t.per_rank, t.cores_pos, t.memory_pos, t.gpus_pos, retries, timeout,
                  diags);
    }
  }
  if (ready == nullptr) {
    diags.add(t.pos, "service '" + t.name +
                         "' has no 'ready' probe: say how to tell it is up, e.g. "
                         "'ready: {tcp: 5555}' (or http, stdout, file)");
  }
  const ReadyProbe& probe = s.spec.ready;
  if ((probe.kind == ProbeKind::tcp || probe.kind == ProbeKind::http) && probe.port > 0 &&
      probe.port + s.spec.replicas - 1 > 65535) {
    diags.add(s.port_pos, "service '" + t.name + "' has " + std::to_string(s.spec.replicas) +
                              " replicas on ports " + std::to_string(probe.port) + ".." +
                              std::to_string(probe.port + s.spec.replicas - 1) +
                              ", beyond the last port 65535");
  }
  if (diags.reports() != before) return std::nullopt;
  if (!budget.add_read(t, where.substr(3), diags)) return std::nullopt;
  return s;
}

}  // namespace

KeyValues service_placeholders(const ServiceSpec& spec, int replica) {
  KeyValues vars{{"replica", std::to_string(replica)}};
  if (spec.ready.kind == ProbeKind::tcp || spec.ready.kind == ProbeKind::http) {
    vars.emplace_back("port", std::to_string(spec.ready.port + replica));
  }
  return vars;
}

std::vector<ServiceTemplate> read_services(const MapEntry& entry, const TaskDefaults& defaults,
                                           TextBudget& budget, DiagnosticList& diags) {
  std::vector<ServiceTemplate> out;
  if (entry.value.IsNull()) return out;
  if (!entry.value.IsSequence()) {
    diags.add(entry.value_pos, "'services' must be a list of services (each '- name: ...'), got " +
                                   describe_node(entry.value));
    return out;
  }
  std::size_t index = 0;
  for (const YAML::Node& node : entry.value) {
    if (auto s = read_service(node, index++, defaults, budget, diags)) out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace chorus
