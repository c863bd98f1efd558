#include "workflows/graph_builder.hpp"

#include <algorithm>
#include <functional>
#include <memory>

#include "core/text.hpp"
#include "schedulers/placement/rank_spread.hpp"
#include "workflows/placeholder.hpp"
#include "workflows/quorum_reader.hpp"
#include "workflows/round_blueprint.hpp"
#include "workflows/task_instance.hpp"
#include "workflows/text_budget.hpp"

namespace chorus {
namespace {

// Above this many members, an unknown member name gets no "did you mean" (it would cost an edit
// distance per member).
constexpr std::uint64_t kMaxSuggestionMembers = 10'000;

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string task_kind_name(const TaskTemplate& t) {
  if (t.gate) return "repeat group '" + t.name + "'";
  // A group's tasks have the variable `round`: only a foreach beyond it makes them a sweep.
  const std::size_t own = t.sweep.size() - (t.group != kNoGroup ? 1 : 0);
  return (own == 0 ? "task '" : "sweep '") + t.name + "'";
}

void set_key(KeyValues& env, const std::string& key, std::string value) {
  for (auto& [k, v] : env) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  env.emplace_back(key, std::move(value));
}

}  // namespace

std::string GraphBuilder::describe(std::size_t i) const {
  const TaskTemplate& t = templates_[i];
  return (t.gate ? "repeat group '" : "task '") + t.name + "'";
}

bool GraphBuilder::build(WorkflowGraph& graph) {
  const std::size_t before = diags_.reports();
  check_templates();
  check_services();
  if (diags_.reports() != before) return false;
  if (!expand(graph)) return false;
  check_cycles(graph);
  if (diags_.reports() != before) return false;
  if (Status s = validate_graph(graph); !s.ok()) {
    diags_.add({}, "internal error, please report: the built graph is invalid: " + s.message());
    return false;
  }
  return true;
}

void GraphBuilder::check_templates() {
  first_id_.assign(1, 0);
  group_first_.assign(groups_.size(), templates_.size());
  group_gate_.assign(groups_.size(), templates_.size());
  bool over_limit = false;
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    const TaskTemplate& t = templates_[i];
    if (t.group != kNoGroup) {
      auto g = static_cast<std::size_t>(t.group);
      group_first_[g] = std::min(group_first_[g], i);
      if (t.gate) group_gate_[g] = i;
    }
    auto [first, fresh] = by_name_.emplace(t.name, i);
    if (!fresh) {
      diags_.add(t.pos, "duplicate task name '" + t.name + "' (first defined on line " +
                            std::to_string(templates_[first->second].pos.line) + ")");
    }
    const std::uint64_t size = sweep_size(t.sweep);
    const std::uint64_t so_far = first_id_.back();
    if (!over_limit && size > limits_.max_tasks - so_far) {
      over_limit = true;
      diags_.add(
          t.sweep.empty() ? t.pos : t.sweep_pos,
          "too many tasks: " + task_kind_name(t) + " has " + std::to_string(size) +
              (t.sweep.empty() ? " task" : " members") +
              (so_far > 0 ? " and " + std::to_string(so_far) + " tasks come before it" : "") +
              "; a workflow may have at most " + std::to_string(limits_.max_tasks) + " tasks");
    }
    first_id_.push_back(over_limit ? so_far : so_far + size);
    if (!over_limit) check_text_size(t, size);
    check_placeholders(t);
    if (!check_container(t)) check_fits(t);
  }
}

void GraphBuilder::check_services() {
  for (std::size_t s = 0; s < services_.size(); ++s) {
    const ServiceTemplate& svc = services_[s];
    const TaskTemplate& t = svc.task;
    if (auto task = by_name_.find(t.name); task != by_name_.end()) {
      const TaskTemplate& other = templates_[task->second];
      diags_.add(t.pos, "service '" + t.name + "' has the same name as " +
                            (other.gate ? "repeat group '" : "task '") + other.name + "' (line " +
                            std::to_string(other.pos.line) +
                            "); services, tasks and repeat groups share one set of names");
    }
    auto [first, fresh] = service_by_name_.emplace(t.name, s);
    if (!fresh) {
      diags_.add(t.pos, "duplicate service name '" + t.name + "' (first defined on line " +
                            std::to_string(services_[first->second].task.pos.line) + ")");
    }
    check_text_size(t, static_cast<std::uint64_t>(svc.spec.replicas));
    const KeyValues vars = service_placeholders(svc.spec, 0);
    const bool has_port = vars.size() > 1;
    auto check = [&](const LocatedText& text, const std::string& field) {
      if (!has_braces(text.text)) return;
      const std::string where = "in " + field + " of service '" + t.name + "'";
      auto r = substitute_placeholders(text.text, vars, where);
      if (r.ok()) return;
      KeyValues with_port = vars;
      if (!has_port) with_port.emplace_back("port", "1");
      if (!has_port && substitute_placeholders(text.text, with_port).ok()) {
        diags_.add(text.pos, "'{port}' " + where + " needs a tcp or http 'ready' probe (it is " +
                                 "the probe's port + the replica number); this one is '" +
                                 to_string(svc.spec.ready.kind) + "'");
      } else {
        diags_.add(text.pos, r.status().message());
      }
    };
    for (const auto& a : t.argv) check(a, "the command");
    if (t.argv.empty()) check(t.shell_command, "the command");
    for (const auto& [k, v] : t.env) check(v, "env '" + k + "'");
    if (t.workdir) check(*t.workdir, "the workdir");
    if (t.image) check(*t.image, "the image");
    if (limits_.containers && svc.spec.ready.kind == ProbeKind::stdout_regex) {
      // Kubernetes runs the probe (a readinessProbe) and has no stdout check: its Service would
      // list a replica before chorus calls it ready (docs/kubernetes.md).
      diags_.add(svc.ready_pos, "service '" + t.name +
                                    "' has a stdout probe, which Kubernetes cannot run as a "
                                    "readinessProbe; use a tcp, http or file probe");
    }
    if (!check_container(t)) check_fits(t);
  }
}

void GraphBuilder::check_text_size(const TaskTemplate& t, std::uint64_t members) {
  if (text_over_) return;
  const std::uint64_t each = member_text_bytes(t);
  const std::uint64_t before = text_bytes_;
  const std::uint64_t mine = each != 0 && members > UINT64_MAX / each ? UINT64_MAX : members * each;
  text_bytes_ = before > UINT64_MAX - mine ? UINT64_MAX : before + mine;
  if (text_bytes_ <= limits_.max_text_bytes) return;
  text_over_ = true;
  const bool sweep = members > 1;
  const std::string what =
      t.kind == TaskKind::service ? "service '" + t.name + "'" : task_kind_name(t);
  diags_.add(sweep && t.sweep_pos.known() ? t.sweep_pos : t.pos,
             "too much text: " + what + " would expand to " +
                 (sweep ? std::to_string(members) +
                              (t.kind == TaskKind::service ? " replicas" : " members") +
                              " of up to " + std::to_string(each) + " bytes each"
                        : std::to_string(each) + " bytes") +
                 " (command, env, workdir, outputs, inputs and name, placeholders substituted)" +
                 (before > 0 ? ", " + std::to_string(before) + " bytes with the tasks before it"
                             : std::string()) +
                 "; a workflow's tasks may hold at most " + budget_text(limits_.max_text_bytes) +
                 ". Keep large values in a file the tasks read");
}

void GraphBuilder::check_placeholders(const TaskTemplate& t) {
  // Placeholder errors do not depend on the values, so checking one member checks them all.
  const KeyValues vars = t.sweep.empty() ? KeyValues{} : sweep_member(t.sweep, 0);
  auto check = [&](const LocatedText& text, const std::string& field) {
    if (!has_braces(text.text)) return;
    auto r = substitute_placeholders(text.text, vars, "in " + field + " of task '" + t.name + "'");
    if (!r.ok()) diags_.add(text.pos, r.status().message());
  };
  for (const auto& a : t.argv) check(a, "the command");
  if (t.argv.empty()) check(t.shell_command, "the command");
  for (const auto& [k, v] : t.env) check(v, "env '" + k + "'");
  if (t.workdir) check(*t.workdir, "the workdir");
  for (const auto& o : t.outputs) check(o, "the outputs");
  for (const auto& in : t.inputs) check(in, "the inputs");
  for (const auto& a : t.after) check(a, "'after'");
  if (t.image) check(*t.image, "the image");
}

bool GraphBuilder::check_container(const TaskTemplate& t) {
  if (!limits_.containers || t.kind == TaskKind::function || t.gate) return false;
  const bool service = t.kind == TaskKind::service;
  bool reported = false;
  if (!t.image) {
    diags_.add(t.pos, (service ? "service '" + t.name + "'" : task_kind_name(t)) +
                          " has no image: set image: on the task or in defaults: (the Kubernetes "
                          "backend runs every task in a container)");
    reported = true;
  }
  if (t.kind != TaskKind::mpi || t.nodes == 1) return reported;
  // One Pod is one node: the ranks must fit the largest node (nodes: 1 that does not fit is
  // check_fits' "can never run here"). Unknown nodes: only nodes > 1 is known to span Pods.
  bool spans = t.nodes > 1;
  if (!spans) {
    int most = -1;
    auto consider = [&](const Resources& n) {
      if (n.cores <= 0) return;
      Resources rank = t.per_rank;
      if (n.memory_mb <= 0) rank.memory_mb = 0;
      most = std::max(most, ranks_fitting(rank, n, t.ranks));
    };
    consider(limits_.largest_node);
    for (const Resources& n : limits_.nodes) consider(n);
    spans = most >= 0 && most < t.ranks;
  }
  if (!spans) return reported;
  diags_.add(t.nodes > 1 ? t.nodes_pos : (t.ranks_pos.known() ? t.ranks_pos : t.pos),
             "an MPI task across Pods needs the MPI Operator, which chorus does not support yet; "
             "keep its ranks on one node (nodes: 1)");
  return true;
}

void GraphBuilder::check_fits(const TaskTemplate& t) {
  const Resources& node = limits_.largest_node;
  if (node.cores <= 0) return;
  const std::string head = std::string(t.kind == TaskKind::service ? "service '" : "task '") +
                           t.name + "' can never run here: needs ";
  const std::string& machine = limits_.machine_phrase;
  const std::int64_t cores = static_cast<std::int64_t>(t.per_rank.cores) * t.ranks;
  if (t.kind == TaskKind::mpi && t.nodes != 1 && limits_.nodes.size() > 1) {
    check_spread_fits(t);
  } else if (t.ranks > 1 && cores > node.cores) {
    diags_.add(t.ranks_pos.known() ? t.ranks_pos : t.pos,
               head + std::to_string(t.ranks) + " ranks x " +
                   plural(t.per_rank.cores, "core", "cores") + " = " + std::to_string(cores) +
                   " cores, " + machine + " has " + std::to_string(node.cores));
  } else if (t.per_rank.cores > node.cores) {
    diags_.add(t.cores_pos.known() ? t.cores_pos : t.pos,
               head + plural(t.per_rank.cores, "core", "cores") + ", " + machine + " has " +
                   std::to_string(node.cores));
  }
  if (node.memory_mb > 0 && t.per_rank.memory_mb > node.memory_mb) {
    diags_.add(t.memory_pos.known() ? t.memory_pos : t.pos,
               head + std::to_string(t.per_rank.memory_mb) + " MB of memory, " + machine + " has " +
                   std::to_string(node.memory_mb) + " MB");
  }
  if (t.per_rank.gpus > node.gpus) {
    diags_.add(t.gpus_pos.known() ? t.gpus_pos : t.pos,
               head + plural(t.per_rank.gpus, "GPU", "GPUs") + ", " + machine + " has " +
                   std::to_string(node.gpus));
  }
}

void GraphBuilder::check_spread_fits(const TaskTemplate& t) {
  std::vector<std::int64_t> fits;  // ranks each node can hold, fullest first
  for (const Resources& n : limits_.nodes) {
    // Counted as PlacementStep counts them; a node whose memory is unknown (0) does not limit.
    Resources rank = t.per_rank;
    if (n.memory_mb <= 0) rank.memory_mb = 0;
    fits.push_back(ranks_fitting(rank, n, t.ranks));
  }
  std::sort(fits.begin(), fits.end(), std::greater<>());
  const std::string head = "task '" + t.name + "' can never run in this allocation: needs ";
  const std::string size = std::to_string(t.ranks) + " ranks x " + to_string(t.per_rank);
  if (t.nodes > 1) {
    if (static_cast<std::size_t>(t.nodes) > fits.size()) {
      diags_.add(t.nodes_pos,
                 head + std::to_string(t.nodes) + " nodes, has " + std::to_string(fits.size()));
      return;
    }
    const std::int64_t most = block_ranks(t.ranks, t.nodes, 0);
    for (int j = 0; j < t.nodes; ++j) {
      if (fits[static_cast<std::size_t>(j)] < block_ranks(t.ranks, t.nodes, j)) {
        diags_.add(t.nodes_pos, head + size + " on " + std::to_string(t.nodes) + " nodes (" +
                                    std::to_string(most) + " ranks on the fullest), and only " +
                                    std::to_string(j) + " of its nodes have that room");
        return;
      }
    }
    return;
  }
  std::int64_t total = 0;
  for (auto k : fits) total += k;
  if (total < t.ranks) {
    diags_.add(t.ranks_pos.known() ? t.ranks_pos : t.pos,
               head + size + ", its " + std::to_string(fits.size()) + " nodes hold " +
                   std::to_string(total) + " such ranks");
  }
}

std::optional<std::uint64_t> GraphBuilder::find_member(std::size_t tmpl, const std::string& name) {
  auto [it, fresh] = members_.try_emplace(tmpl);
  auto& index = it->second;
  if (fresh) {
    const TaskTemplate& t = templates_[tmpl];
    const std::uint64_t n = first_id_[tmpl + 1] - first_id_[tmpl];
    index.reserve(n);
    for (std::uint64_t m = 0; m < n; ++m)
      index.emplace(member_name(t.name, sweep_member(t.sweep, m)), m);
  }
  auto found = index.find(name);
  if (found == index.end()) return std::nullopt;
  return found->second;
}

bool GraphBuilder::check_group_access(std::size_t from, std::size_t to, const LocatedText& ref) {
  const TaskTemplate& f = templates_[from];
  const TaskTemplate& t = templates_[to];
  if (t.group == kNoGroup) return true;
  const std::string& group = groups_[static_cast<std::size_t>(t.group)].name;
  if (t.gate) {
    if (f.group != t.group) return true;
    diags_.add(ref.pos, describe(from) + " is inside repeat group '" + group +
                            "' and cannot depend on the group itself (names inside the group "
                            "mean the same round's tasks)");
    return false;
  }
  if (f.group == t.group && !f.gate) return true;
  if (f.gate && f.group == t.group) {
    diags_.add(ref.pos, "repeat group '" + group + "' depends on its own task '" + t.name +
                            "': its 'after' names tasks outside the group that round 1 waits for");
    return false;
  }
  diags_.add(ref.pos, describe(from) + " depends on '" + ref.text + "', but '" + t.name +
                          "' is inside repeat group '" + group + "'; depend on '" + group +
                          "' instead");
  return false;
}

std::optional<GraphBuilder::Target> GraphBuilder::resolve(std::size_t from,
                                                          const LocatedText& ref) {
  const TaskTemplate& self = templates_[from];
  const std::string head = describe(from) + " depends on ";
  if (auto it = by_name_.find(ref.text); it != by_name_.end()) {
    if (it->second == from) {
      const std::string what = task_kind_name(self);
      diags_.add(ref.pos, what + " depends on itself" +
                              (what.starts_with("sweep") ? " (every member would wait for every "
                                                           "member, itself included)"
                                                         : ""));
      return std::nullopt;
    }
    if (!check_group_access(from, it->second, ref)) return std::nullopt;
    return Target{it->second, kAll};
  }
  const std::size_t bracket = ref.text.find('[');
  if (bracket != std::string::npos) {
    auto base = by_name_.find(ref.text.substr(0, bracket));
    if (base != by_name_.end() && !templates_[base->second].sweep.empty()) {
      const std::size_t tmpl = base->second;
      if (!check_group_access(from, tmpl, ref)) return std::nullopt;
      const TaskTemplate& t = templates_[tmpl];
      std::string name = ref.text;
      // Inside a group, "simulate[cfg=0]" means the member of the same round.
      if (t.group != kNoGroup && t.group == self.group &&
          ref.text.compare(bracket + 1, 6, "round=") != 0) {
        name.insert(bracket + 1,
                    ref.text.compare(bracket + 1, 1, "]") == 0 ? "round=1" : "round=1,");
      }
      if (auto m = find_member(tmpl, name)) return Target{tmpl, *m};
      std::string hint;
      if (first_id_[tmpl + 1] - first_id_[tmpl] <= kMaxSuggestionMembers) {
        std::vector<std::string> names;
        for (const auto& [member, m] : members_[tmpl]) names.push_back(member);
        std::sort(names.begin(), names.end());
        hint = did_you_mean(name, names);
      }
      if (hint.empty())
        hint = " (members are named like '" + member_name(t.name, sweep_member(t.sweep, 0)) + "')";
      diags_.add(ref.pos, head + "unknown task '" + ref.text + "': " + task_kind_name(t) +
                              " has no such member" + hint);
      return std::nullopt;
    }
  }
  if (service_by_name_.count(ref.text) != 0) {
    diags_.add(ref.pos, head + "'" + ref.text + "', but '" + ref.text +
                            "' is a service: use `uses:` (a task using a service starts once "
                            "every replica is ready)");
    return std::nullopt;
  }
  std::vector<std::string> names;
  names.reserve(templates_.size());
  for (const auto& t : templates_) names.push_back(t.name);
  diags_.add(ref.pos, head + "unknown task '" + ref.text + "'" + did_you_mean(ref.text, names));
  return std::nullopt;
}

std::vector<ServiceId> GraphBuilder::resolve_uses(std::size_t i) {
  const TaskTemplate& t = templates_[i];
  std::vector<ServiceId> out;
  for (const LocatedText& u : t.uses) {
    auto it = service_by_name_.find(u.text);
    if (it != service_by_name_.end()) {
      out.push_back(static_cast<ServiceId>(it->second));
      continue;
    }
    if (by_name_.count(u.text) != 0) {
      diags_.add(u.pos, describe(i) + " uses '" + u.text +
                            "', which is a task, not a service: " + "wait for it with 'after:'");
      continue;
    }
    std::vector<std::string> names;
    for (const auto& s : services_) names.push_back(s.task.name);
    diags_.add(u.pos, describe(i) + " uses unknown service '" + u.text + "'" +
                          (names.empty() ? std::string(" (the workflow has no 'services:')")
                                         : did_you_mean(u.text, names)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool GraphBuilder::expand(WorkflowGraph& graph) {
  const std::size_t before = diags_.reports();
  // `after` entries without placeholders resolve once per template; the others per member.
  std::vector<std::vector<std::optional<Target>>> fixed(templates_.size());
  uses_.assign(templates_.size(), {});
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    for (const auto& ref : templates_[i].after) {
      fixed[i].push_back(has_braces(ref.text) ? std::nullopt : resolve(i, ref));
    }
    uses_[i] = resolve_uses(i);
  }
  if (diags_.reports() != before) return false;
  if (!check_edge_count(fixed)) return false;

  graph.tasks.clear();
  graph.tasks.reserve(first_id_.back());
  std::uint64_t edges = 0;
  // Round 1 of each group, as the blueprint of its later rounds.
  std::vector<std::vector<RoundBlueprint::Member>> rounds(groups_.size());
  auto add_target = [&](const Target& target, std::vector<TaskId>& after) {
    const std::uint64_t lo = first_id_[target.tmpl];
    if (target.member == kAll) {
      for (std::uint64_t d = lo; d < first_id_[target.tmpl + 1]; ++d) {
        after.push_back(static_cast<TaskId>(d));
      }
    } else {
      after.push_back(static_cast<TaskId>(lo + target.member));
    }
  };
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    const TaskTemplate& t = templates_[i];
    if (t.gate) {
      TaskSpec gate;
      gate.name = t.name;
      gate.pos = {t.pos.line, t.pos.column};
      gate.kind = TaskKind::function;
      gate.per_rank = Resources{0, 0, 0};
      gate.held = true;
      gate.fn = [] { return Status{}; };
      const auto g = static_cast<std::size_t>(t.group);
      for (std::uint64_t d = first_id_[group_first_[g]]; d < first_id_[i]; ++d) {
        gate.after.push_back(static_cast<TaskId>(d));
      }
      edges += gate.after.size();
      graph.add(std::move(gate));
      continue;
    }
    const std::uint64_t members = first_id_[i + 1] - first_id_[i];
    std::vector<bool> reported(t.after.size(), false);
    for (std::uint64_t m = 0; m < members; ++m) {
      TaskSpec spec;
      spec.params = t.sweep.empty() ? KeyValues{} : sweep_member(t.sweep, m);
      spec.name = t.sweep.empty() ? t.name : member_name(t.name, spec.params);
      (void)instantiate_task(t, spec.params, graph.workdir, spec, &diags_);
      spec.uses = uses_[i];
      for (std::size_t a = 0; a < t.after.size(); ++a) {
        std::optional<Target> target = fixed[i][a];
        if (has_braces(t.after[a].text)) {
          if (reported[a]) continue;
          auto text =
              substitute_placeholders(t.after[a].text, spec.params, "in task '" + spec.name + "'");
          if (!text.ok()) {
            diags_.add(t.after[a].pos, text.status().message());
            reported[a] = true;
            continue;
          }
          LocatedText ref{std::move(*text), t.after[a].pos};
          const std::size_t mark = diags_.reports();
          target = resolve(i, ref);
          if (target && target->tmpl == i && target->member == m) {
            diags_.add(ref.pos, "task '" + spec.name + "' depends on itself");
            target.reset();
          }
          if (target && t.group != kNoGroup &&
              t.after[a].text.find("{round}") != std::string::npos &&
              templates_[target->tmpl].group != t.group) {
            diags_.add(ref.pos, "'{round}' in 'after' of task '" + t.name +
                                    "' may only name tasks of its repeat group '" +
                                    groups_[static_cast<std::size_t>(t.group)].name +
                                    "' (names inside the group already mean the same round)");
            target.reset();
          }
          if (diags_.reports() != mark) reported[a] = true;
        }
        if (target) add_target(*target, spec.after);
      }
      if (t.group != kNoGroup) {
        const auto g = static_cast<std::size_t>(t.group);
        std::sort(spec.after.begin(), spec.after.end());
        spec.after.erase(std::unique(spec.after.begin(), spec.after.end()), spec.after.end());
        RoundBlueprint::Member member;
        member.tmpl = static_cast<std::uint32_t>(i - group_first_[g]);
        member.member = m;
        const TaskId lo = static_cast<TaskId>(first_id_[group_first_[g]]);
        const TaskId hi = static_cast<TaskId>(first_id_[group_gate_[g]]);
        for (TaskId d : spec.after) {
          if (d >= lo && d < hi) {
            member.local_after.push_back(d - lo);
          } else {
            member.after.push_back(d);
          }
        }
        rounds[g].push_back(std::move(member));
        for (const auto& target : fixed[group_gate_[g]]) {
          if (target) add_target(*target, spec.after);
        }
      }
      std::sort(spec.after.begin(), spec.after.end());
      spec.after.erase(std::unique(spec.after.begin(), spec.after.end()), spec.after.end());
      edges += spec.after.size();
      if (edges > limits_.max_edges) {
        diags_.add(t.pos, "too many dependencies: at task '" + spec.name +
                              "' the workflow has more than " + std::to_string(limits_.max_edges) +
                              " (a sweep after a sweep waits for every member of it; add a "
                              "single task between them, or depend on one member per member)");
        return false;
      }
      graph.add(std::move(spec));
    }
  }
  if (diags_.reports() != before) return false;
  add_services(graph);

  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const RepeatTemplate& src = groups_[g];
    std::vector<TaskTemplate> group_templates(
        templates_.begin() + static_cast<std::ptrdiff_t>(group_first_[g]),
        templates_.begin() + static_cast<std::ptrdiff_t>(group_gate_[g]));
    std::vector<std::vector<ServiceId>> group_uses(
        uses_.begin() + static_cast<std::ptrdiff_t>(group_first_[g]),
        uses_.begin() + static_cast<std::ptrdiff_t>(group_gate_[g]));
    RepeatGroup group;
    group.name = src.name;
    group.gate = static_cast<TaskId>(first_id_[group_gate_[g]]);
    group.max_rounds = src.max_rounds;
    group.line = src.pos.line;
    group.column = src.pos.column;
    for (auto d = first_id_[group_first_[g]]; d < first_id_[group_gate_[g]]; ++d) {
      group.first_round.push_back(static_cast<TaskId>(d));
    }
    auto blueprint = std::make_shared<const RoundBlueprint>(
        src.name, src.max_rounds, graph.workdir, std::move(group_templates), std::move(group_uses),
        std::move(rounds[g]));
    group.expand = [blueprint](int round) { return blueprint->expand(round); };
    for (std::size_t i = group_first_[g]; i < group_gate_[g]; ++i) {
      const TaskTemplate& t = templates_[i];
      if (!t.quorum) continue;
      QuorumSweep sweep;
      sweep.name = t.name;
      sweep.choice = t.quorum->choice;
      const std::uint64_t lo = first_id_[group_first_[g]];
      for (std::uint64_t d = first_id_[i]; d < first_id_[i + 1]; ++d) {
        sweep.members.push_back(static_cast<std::uint32_t>(d - lo));
      }
      sweep.file = quorum_file_pattern(graph.workdir, src.name);
      group.quorum = std::move(sweep);
    }
    const std::string where = "repeat group '" + src.name + "' (" + graph.source_path + ":" +
                              std::to_string(src.pos.line) + ")";
    group.until = [condition = src.until, workdir = graph.workdir, where](int round) {
      return evaluate_until(condition, round, workdir, where);
    };
    graph.repeats.push_back(std::move(group));
  }
  return diags_.reports() == before;
}

void GraphBuilder::add_services(WorkflowGraph& graph) {
  for (std::size_t s = 0; s < services_.size(); ++s) {
    const ServiceTemplate& svc = services_[s];
    ServiceSpec spec = svc.spec;
    spec.replica_tasks.clear();
    for (int r = 0; r < spec.replicas; ++r) {
      TaskSpec task;
      const KeyValues vars = service_placeholders(spec, r);
      task.name = spec.replicas == 1 ? svc.task.name
                                     : member_name(svc.task.name, {{"replica", std::to_string(r)}});
      (void)instantiate_task(svc.task, vars, graph.workdir, task, &diags_);
      task.kind = TaskKind::service;
      task.service = static_cast<ServiceId>(s);
      task.replica = r;
      task.kill_grace = spec.stop_grace;
      set_key(task.env, "CHORUS_REPLICA", std::to_string(r));
      if (vars.size() > 1) set_key(task.env, "CHORUS_SERVICE_PORT", vars[1].second);
      spec.replica_tasks.push_back(graph.add(std::move(task)));
    }
    graph.services.push_back(std::move(spec));
  }
}

bool GraphBuilder::check_edge_count(const std::vector<std::vector<std::optional<Target>>>& fixed) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    std::vector<std::size_t> whole;
    std::vector<std::pair<std::size_t, std::uint64_t>> single;
    std::uint64_t per_member = 0;
    for (std::size_t a = 0; a < fixed[i].size(); ++a) {
      if (!fixed[i][a]) {
        per_member += 1;  // has placeholders: one member; counted exactly during expansion
      } else if (fixed[i][a]->member == kAll) {
        whole.push_back(fixed[i][a]->tmpl);
      } else {
        single.emplace_back(fixed[i][a]->tmpl, fixed[i][a]->member);
      }
    }
    std::sort(whole.begin(), whole.end());
    whole.erase(std::unique(whole.begin(), whole.end()), whole.end());
    std::sort(single.begin(), single.end());
    single.erase(std::unique(single.begin(), single.end()), single.end());
    for (std::size_t w : whole) per_member += first_id_[w + 1] - first_id_[w];
    for (const auto& [tmpl, m] : single) {
      if (!std::binary_search(whole.begin(), whole.end(), tmpl)) per_member += 1;
    }
    const std::uint64_t members = first_id_[i + 1] - first_id_[i];
    total += members * per_member;  // both <= 1e6 + 1e6 entries: no overflow
    if (total > limits_.max_edges) {
      const TaskTemplate& t = templates_[i];
      diags_.add(t.after.empty() ? t.pos : t.after.front().pos,
                 "too many dependencies: with " + task_kind_name(t) + " the workflow has " +
                     std::to_string(total) + " 'after' links, more than the limit of " +
                     std::to_string(limits_.max_edges) +
                     " (a sweep after a sweep waits for every member of it; put one task "
                     "between them, or depend on one member each with \"name[var={var}]\")");
      return false;
    }
  }
  return true;
}

void GraphBuilder::check_cycles(const WorkflowGraph& graph) {
  const std::vector<TaskId> cycle = find_cycle(graph);
  if (cycle.empty()) return;
  // The cycle starts at the task written first in the file: point there.
  const auto tmpl = static_cast<std::size_t>(
      std::upper_bound(first_id_.begin(), first_id_.end(), cycle.front()) - first_id_.begin() - 1);
  diags_.add(templates_[tmpl].pos, "dependency cycle: " + describe_cycle(graph, cycle));
}

}  // namespace chorus
