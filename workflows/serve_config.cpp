#include "workflows/serve_config.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>

#include "workflows/diagnostic_list.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/workflow_source.hpp"

namespace chorus {
namespace {

constexpr std::uint64_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxConfigNesting = 16;

OptionOrigin origin(const DiagnosticList& diags, Position at) {
  return {diags.path(), at.line, at.column};
}

bool expect_map(const MapEntry& e, const std::string& label, const std::string& example,
                DiagnosticList& diags) {
  if (e.value.IsMap()) return true;
  diags.add(e.value_pos,
            label + " must be a map such as " + example + ", got " + describe_node(e.value));
  return false;
}

// `policy_options: {lane_cores: auto, grace: 2s}`: kept as written, with their places; the
// policies check them when the instance builds them (their names are not known here).
void read_policy_options(const MapEntry& e, ServeConfig& c, DiagnosticList& diags) {
  if (!expect_map(e, "'policy_options'", "{lane_cores: auto, grace: 2s}", diags)) return;
  for (const MapEntry& o : map_entries(e.value, "in 'policy_options'", diags)) {
    if (o.key == "weights") {
      diags.add(o.key_pos,
                "'weights' in 'policy_options': users' and groups' shares are the top-level "
                "'weights: {users: {alice: 2}, groups: {physics: 3}}'");
      continue;
    }
    c.policy_options.entries.push_back({o.key, origin(diags, o.key_pos),
                                        option_value(o.value, o.value_pos, diags.path()),
                                        "policy_options"});
  }
}

std::optional<double> read_weight(const MapEntry& e, const std::string& label,
                                  DiagnosticList& diags) {
  if (e.value.IsScalar() && !is_quoted(e.value)) {
    const std::string& s = e.value.Scalar();
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size() && std::isfinite(v) && v > 0) return v;
  }
  diags.add(e.value_pos, label + " must be a positive number, got " + describe_node(e.value));
  return std::nullopt;
}

void read_names(const MapEntry& e, const std::string& label, std::vector<std::string>& out,
                DiagnosticList& diags) {
  auto names = read_string_list(e, label, true, diags);
  if (!names) return;
  for (const LocatedText& n : *names) {
    if (n.text.empty()) {
      diags.add(n.pos, "a name in " + label + " must not be empty");
      continue;
    }
    out.push_back(n.text);
  }
}

void read_weights(const MapEntry& section, ServeConfig& c, DiagnosticList& diags) {
  if (!expect_map(section, "'weights'", "{users: {alice: 2}, groups: {physics: 3}}", diags)) return;
  static const KeyChecker keys({"users", "groups"}, {});
  for (const MapEntry& e : keys.check(section.value, "in 'weights'", diags)) {
    auto& into = e.key == "users" ? c.user_weights : c.group_weights;
    const std::string where = "'weights: " + e.key + "'";
    if (!expect_map(e, where, "{alice: 2, bob: 1}", diags)) continue;
    for (const MapEntry& w : map_entries(e.value, "in " + where, diags)) {
      if (auto v = read_weight(w, "the weight of '" + w.key + "'", diags)) into[w.key] = *v;
    }
  }
}

// A CURVE public key as `chorus keys` prints it: 40 characters of Z85 (libzmq checks it decodes).
bool looks_like_z85_key(const std::string& k) {
  static constexpr std::string_view kZ85 =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  return k.size() == 40 && k.find_first_not_of(kZ85) == std::string::npos;
}

void read_keys(const MapEntry& section, ServeConfig& c, DiagnosticList& diags) {
  if (!expect_map(section, "'keys'", "{users: {alice: [PUBLIC_KEY]}}", diags)) return;
  static const KeyChecker keys({"users"}, {});
  for (const MapEntry& e : keys.check(section.value, "in 'keys'", diags)) {
    if (!expect_map(e, "'keys: users'", "{alice: [PUBLIC_KEY]}", diags)) continue;
    for (const MapEntry& user : map_entries(e.value, "in 'keys: users'", diags)) {
      auto list = read_string_list(user, "the keys of '" + user.key + "'", true, diags);
      if (!list) continue;
      for (const LocatedText& k : *list) {
        if (!looks_like_z85_key(k.text)) {
          diags.add(k.pos, "'" + k.text + "' is not a public key: 40 characters of Z85, as " +
                               "`chorus keys` prints it");
          continue;
        }
        c.user_keys[user.key].push_back(k.text);
      }
    }
  }
}

// tcp://HOST:PORT with a port of digits or *.
bool valid_listen(const std::string& e) {
  if (e.rfind("tcp://", 0) != 0) return false;
  const auto colon = e.rfind(':');
  if (colon <= 6 || colon + 1 >= e.size()) return false;
  const std::string port = e.substr(colon + 1);
  return port == "*" || port.find_first_not_of("0123456789") == std::string::npos;
}

void read_allocation(const MapEntry& section, ServeConfig& c, DiagnosticList& diags) {
  if (!expect_map(section, "'allocation'", "{slurm: {partition: debug, max_jobs: 4}}", diags)) {
    return;
  }
  static const KeyChecker keys({"slurm"}, {});
  for (const MapEntry& e : keys.check(section.value, "in 'allocation'", diags)) {
    if (!expect_map(e, "'allocation: slurm'",
                    "{partition: debug, max_jobs: 4, nodes: 2, walltime: 30m, idle_timeout: 2m}",
                    diags)) {
      continue;
    }
    ServeSlurmAllocation a;
    a.at = origin(diags, e.key_pos);
    static const KeyChecker slurm_keys(
        {"partition", "max_jobs", "nodes", "walltime", "idle_timeout"}, {});
    for (const MapEntry& k : slurm_keys.check(e.value, "in 'allocation: slurm'", diags)) {
      const std::string label = "'" + k.key + "' in 'allocation: slurm'";
      if (k.key == "partition") {
        if (auto v = read_string(k, label, diags)) a.partition = *v;
      } else if (k.key == "max_jobs") {
        if (auto v = read_integer(k, label, 1, 1000, diags)) a.max_jobs = static_cast<int>(*v);
      } else if (k.key == "nodes") {
        if (auto v = read_integer(k, label, 1, 100000, diags)) a.nodes = static_cast<int>(*v);
      } else {
        auto d = read_duration(k, label, diags);
        if (!d) continue;
        if (*d <= Duration::zero()) {
          diags.add(k.value_pos, label + " must be positive");
          continue;
        }
        (k.key == "walltime" ? a.walltime : a.idle_timeout) = *d;
      }
    }
    c.slurm_allocation = a;
  }
}

void read_one_limits(const MapEntry& e, const std::string& label, ServeLimits& out,
                     DiagnosticList& diags) {
  if (!expect_map(e, label, "{queued_tasks: 1000, running_cores: 16}", diags)) return;
  static const KeyChecker keys({"queued_tasks", "running_cores"}, {});
  for (const MapEntry& l : keys.check(e.value, "in " + label, diags)) {
    auto v = read_integer(l, "'" + l.key + "' in " + label, 1, INT64_MAX, diags);
    if (!v) continue;
    if (l.key == "queued_tasks") {
      out.queued_tasks = *v;
      out.queued_tasks_at = origin(diags, l.key_pos);
    } else {
      out.running_cores = *v;
      out.running_cores_at = origin(diags, l.key_pos);
    }
  }
}

void read_limits(const MapEntry& section, ServeConfig& c, DiagnosticList& diags) {
  if (!expect_map(section, "'limits'", "{default: {queued_tasks: 1000}}", diags)) return;
  static const KeyChecker keys({"default", "users", "groups"}, {});
  for (const MapEntry& e : keys.check(section.value, "in 'limits'", diags)) {
    if (e.key == "default") {
      read_one_limits(e, "'limits: default'", c.default_limits, diags);
      continue;
    }
    auto& into = e.key == "users" ? c.user_limits : c.group_limits;
    const std::string where = "'limits: " + e.key + "'";
    if (!expect_map(e, where, "{bob: {queued_tasks: 100}}", diags)) continue;
    for (const MapEntry& one : map_entries(e.value, "in " + where, diags)) {
      read_one_limits(one, "the limits of '" + one.key + "'", into[one.key], diags);
    }
  }
}

}  // namespace

Result<ServeConfig> parse_serve_config(std::string_view text, const std::string& path) {
  DiagnosticList diags(path);
  diags.set_source(text);
  if (!check_workflow_text(text, kMaxConfigBytes, kMaxConfigNesting, diags)) {
    return diags.to_status();
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    diags.add({e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg);
    return diags.to_status();
  }
  ServeConfig c;
  c.path = path;
  if (!root.IsDefined() || root.IsNull()) return c;  // only comments: the defaults
  if (!root.IsMap()) {
    diags.add(position_of(root, {1, 1}),
              "a serve config is a map (queue, placement, policy_options, cores, "
              "admins, weights, limits, listen, keys, allocation), got " +
                  describe_node(root));
    return diags.to_status();
  }
  static const KeyChecker keys({"queue", "placement", "policy_options", "cores", "admins",
                                "weights", "limits", "listen", "keys", "allocation"},
                               {});
  for (const MapEntry& e : keys.check(root, "in the serve config", diags)) {
    if (e.key == "queue" || e.key == "placement") {
      auto name = read_string(e, "'" + e.key + "'", diags);
      if (!name) continue;
      (e.key == "queue" ? c.queue : c.placement) = *name;
      (e.key == "queue" ? c.queue_at : c.placement_at) = origin(diags, e.value_pos);
    } else if (e.key == "policy_options") {
      read_policy_options(e, c, diags);
    } else if (e.key == "cores") {
      if (auto v = read_integer(e, "'cores'", 1, 1 << 20, diags)) c.cores = *v;
    } else if (e.key == "admins") {
      if (!expect_map(e, "'admins'", "{users: [alice], groups: [hpcadmin]}", diags)) continue;
      static const KeyChecker admin_keys({"users", "groups"}, {});
      for (const MapEntry& a : admin_keys.check(e.value, "in 'admins'", diags)) {
        read_names(a, "'admins: " + a.key + "'", a.key == "users" ? c.admin_users : c.admin_groups,
                   diags);
      }
    } else if (e.key == "listen") {
      auto endpoint = read_string(e, "'listen'", diags);
      if (!endpoint) continue;
      if (!valid_listen(*endpoint)) {
        diags.add(e.value_pos, "'listen' must be tcp://IP:PORT (PORT * for any free one), got '" +
                                   *endpoint + "'");
        continue;
      }
      c.listen = *endpoint;
      c.listen_at = origin(diags, e.value_pos);
    } else if (e.key == "keys") {
      read_keys(e, c, diags);
    } else if (e.key == "allocation") {
      read_allocation(e, c, diags);
    } else if (e.key == "weights") {
      c.weights_at = origin(diags, e.key_pos);
      read_weights(e, c, diags);
    } else {
      read_limits(e, c, diags);
    }
  }
  if (!c.listen.empty() && c.user_keys.empty()) {
    diags.add({c.listen_at.line, c.listen_at.column},
              "'listen' without 'keys': no TCP client could connect; list each user's public "
              "keys (chorus keys prints them) under keys: {users: {NAME: [KEY]}}");
  }
  if (!diags.empty()) return diags.to_status();
  return c;
}

Result<ServeConfig> load_serve_config(const std::string& path) {
  auto text = read_workflow_source(path, kMaxConfigBytes, "serve config", "");
  if (!text.ok()) return Status(text.status().code(), path + ": " + text.status().message());
  return parse_serve_config(*text, path);
}

}  // namespace chorus
