#include "workflows/graph_builder.hpp"

#include <algorithm>
#include <filesystem>

#include "core/text.hpp"
#include "workflows/placeholder.hpp"

namespace chorus {
namespace {

// Above this many members, an unknown member name gets no "did you mean" (it would cost an edit
// distance per member).
constexpr std::uint64_t kMaxSuggestionMembers = 10'000;

std::string resolve_dir(const std::string& base, const std::string& dir) {
  std::filesystem::path p = std::filesystem::path(base) / dir;  // an absolute `dir` replaces base
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string task_kind_name(const TaskTemplate& t) {
  return (t.sweep.empty() ? "task '" : "sweep '") + t.name + "'";
}

}  // namespace

bool GraphBuilder::build(WorkflowGraph& graph) {
  const std::size_t before = diags_.reports();
  check_templates();
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
  bool over_limit = false;
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    const TaskTemplate& t = templates_[i];
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
    check_placeholders(t);
    check_fits(t);
  }
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
}

void GraphBuilder::check_fits(const TaskTemplate& t) {
  const Resources& node = limits_.largest_node;
  if (node.cores <= 0) return;
  const std::string head = "task '" + t.name + "' can never run here: needs ";
  const std::string& machine = limits_.machine_phrase;
  const std::int64_t cores = static_cast<std::int64_t>(t.per_rank.cores) * t.ranks;
  if (t.ranks > 1 && cores > node.cores) {
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

std::optional<GraphBuilder::Target> GraphBuilder::resolve(std::size_t from,
                                                          const LocatedText& ref) {
  const std::string& self = templates_[from].name;
  const std::string head = "task '" + self + "' depends on ";
  if (auto it = by_name_.find(ref.text); it != by_name_.end()) {
    if (it->second == from) {
      diags_.add(ref.pos, templates_[from].sweep.empty()
                              ? "task '" + self + "' depends on itself"
                              : "sweep '" + self +
                                    "' depends on itself (every member would wait "
                                    "for every member, itself included)");
      return std::nullopt;
    }
    return Target{it->second, kAll};
  }
  const std::size_t bracket = ref.text.find('[');
  if (bracket != std::string::npos) {
    auto base = by_name_.find(ref.text.substr(0, bracket));
    if (base != by_name_.end() && !templates_[base->second].sweep.empty()) {
      const std::size_t tmpl = base->second;
      if (auto m = find_member(tmpl, ref.text)) return Target{tmpl, *m};
      const TaskTemplate& t = templates_[tmpl];
      std::string hint;
      if (first_id_[tmpl + 1] - first_id_[tmpl] <= kMaxSuggestionMembers) {
        std::vector<std::string> names;
        for (const auto& [name, m] : members_[tmpl]) names.push_back(name);
        std::sort(names.begin(), names.end());
        hint = did_you_mean(ref.text, names);
      }
      if (hint.empty())
        hint = " (members are named like '" + member_name(t.name, sweep_member(t.sweep, 0)) + "')";
      diags_.add(ref.pos, head + "unknown task '" + ref.text + "': sweep '" + t.name +
                              "' has no such member" + hint);
      return std::nullopt;
    }
  }
  std::vector<std::string> names;
  names.reserve(templates_.size());
  for (const auto& t : templates_) names.push_back(t.name);
  diags_.add(ref.pos, head + "unknown task '" + ref.text + "'" + did_you_mean(ref.text, names));
  return std::nullopt;
}

bool GraphBuilder::expand(WorkflowGraph& graph) {
  const std::size_t before = diags_.reports();
  // `after` entries without placeholders resolve once per template; the others per member.
  std::vector<std::vector<std::optional<Target>>> fixed(templates_.size());
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    for (const auto& ref : templates_[i].after) {
      fixed[i].push_back(has_braces(ref.text) ? std::nullopt : resolve(i, ref));
    }
  }
  if (diags_.reports() != before) return false;
  if (!check_edge_count(fixed)) return false;

  graph.tasks.clear();
  graph.tasks.reserve(first_id_.back());
  std::uint64_t edges = 0;
  auto sub = [&](const LocatedText& text, const KeyValues& vars, const std::string& name) {
    auto r = substitute_placeholders(text.text, vars, "in task '" + name + "'");
    if (!r.ok()) {
      diags_.add(text.pos, r.status().message());
      return std::string{};
    }
    return std::move(*r);
  };
  for (std::size_t i = 0; i < templates_.size(); ++i) {
    const TaskTemplate& t = templates_[i];
    const std::uint64_t members = first_id_[i + 1] - first_id_[i];
    std::vector<bool> reported(t.after.size(), false);
    for (std::uint64_t m = 0; m < members; ++m) {
      TaskSpec spec;
      spec.params = t.sweep.empty() ? KeyValues{} : sweep_member(t.sweep, m);
      spec.name = t.sweep.empty() ? t.name : member_name(t.name, spec.params);
      const KeyValues& vars = spec.params;
      spec.kind = t.kind;
      spec.user = t.user;
      spec.per_rank = t.per_rank;
      spec.ranks = t.ranks;
      if (!t.shell) {
        spec.cmd.argv.reserve(t.argv.size());
        for (const auto& a : t.argv) spec.cmd.argv.push_back(sub(a, vars, spec.name));
      } else if (!t.argv.empty()) {
        for (const auto& a : t.argv) {
          if (!spec.cmd.shell.empty()) spec.cmd.shell += ' ';
          spec.cmd.shell += sub(a, vars, spec.name);
        }
      } else {
        spec.cmd.shell = sub(t.shell_command, vars, spec.name);
      }
      for (const auto& [k, v] : t.env) spec.env.emplace_back(k, sub(v, vars, spec.name));
      if (t.workdir) spec.workdir = resolve_dir(graph.workdir, sub(*t.workdir, vars, spec.name));
      spec.timeout = t.timeout;
      spec.retries = t.retries;
      spec.estimate = t.estimate;
      for (const auto& o : t.outputs) spec.outputs.push_back(sub(o, vars, spec.name));
      for (const auto& in : t.inputs) spec.inputs.push_back(sub(in, vars, spec.name));
      for (std::size_t a = 0; a < t.after.size(); ++a) {
        std::optional<Target> target = fixed[i][a];
        if (has_braces(t.after[a].text)) {
          if (reported[a]) continue;
          LocatedText ref{sub(t.after[a], vars, spec.name), t.after[a].pos};
          const std::size_t mark = diags_.reports();
          target = resolve(i, ref);
          if (target && target->tmpl == i && target->member == m) {
            diags_.add(ref.pos, "task '" + spec.name + "' depends on itself");
            target.reset();
          }
          if (diags_.reports() != mark) reported[a] = true;
        }
        if (!target) continue;
        const std::uint64_t lo = first_id_[target->tmpl];
        if (target->member == kAll) {
          for (std::uint64_t d = lo; d < first_id_[target->tmpl + 1]; ++d) {
            spec.after.push_back(static_cast<TaskId>(d));
          }
        } else {
          spec.after.push_back(static_cast<TaskId>(lo + target->member));
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
  return diags_.reports() == before;
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
