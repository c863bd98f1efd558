#include "workflows/repeat_reader.hpp"

#include <algorithm>

#include "workflows/key_checker.hpp"
#include "workflows/task_reader.hpp"

namespace chorus {
namespace {

const KeyChecker& repeat_keys() {
  static const KeyChecker checker = [] {
    std::vector<std::pair<std::string, std::string>> misplaced;
    for (const char* k :
         {"name", "command", "foreach", "cores", "memory", "gpus", "env", "workdir", "retries",
          "timeout", "uses", "kind", "shell", "image", "image_pull_policy"}) {
      misplaced.emplace_back(k, "'" + std::string(k) +
                                    "' belongs in a task of the repeat group's 'tasks:' (the "
                                    "group holds repeat, max_rounds, after, until, tasks)");
    }
    return KeyChecker({"repeat", "max_rounds", "after", "until", "tasks", "description"}, {},
                      std::move(misplaced));
  }();
  return checker;
}

}  // namespace

bool is_repeat_entry(const YAML::Node& node) {
  if (!node.IsMap()) return false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == "repeat") return true;
  }
  return false;
}

std::optional<RepeatTemplate> read_repeat(const YAML::Node& node, std::size_t index,
                                          const TaskDefaults& defaults, TextBudget& budget,
                                          DiagnosticList& diags) {
  const std::size_t before = diags.reports();
  RepeatTemplate g;
  g.pos = position_of(node);
  g.name = "repeat group #" + std::to_string(index + 1);
  std::string where = "in " + g.name;
  const std::vector<MapEntry> entries = repeat_keys().check(node, where, diags);
  if (const MapEntry* e = find_entry(entries, "repeat")) {
    if (auto name = read_string(*e, "the name of a repeat group ('repeat:')", diags)) {
      if (std::string why = name_problem(*name, "repeat group"); !why.empty()) {
        diags.add(e->value_pos, why);
      } else {
        g.name = *name;
        g.pos = e->value_pos;
        where = "in repeat group '" + g.name + "'";
      }
    }
  }
  const MapEntry* rounds = find_entry(entries, "max_rounds");
  if (rounds == nullptr) {
    diags.add(g.pos, "repeat group '" + g.name +
                         "' has no 'max_rounds' (at most how many rounds, " + "1 to " +
                         std::to_string(kMaxRepeatRounds) + ")");
  } else if (auto v = read_integer(*rounds, "'max_rounds' " + where, 1, kMaxRepeatRounds, diags)) {
    g.max_rounds = static_cast<int>(*v);
  }
  if (const MapEntry* e = find_entry(entries, "after")) {
    if (auto list = read_string_list(*e, "'after' " + where, true, diags)) {
      for (auto& a : *list) {
        if (a.text.empty()) {
          diags.add(a.pos, "an empty task name in 'after' " + where);
        } else {
          g.after.push_back(std::move(a));
        }
      }
    }
  }
  if (const MapEntry* e = find_entry(entries, "until")) {
    if (auto u = read_until(*e, g.name, diags)) g.until = std::move(*u);
  } else {
    diags.add(g.pos, "repeat group '" + g.name +
                         "' has no 'until' (when to stop, such as {file: "
                         "round-{round}/metrics.json, key: /improved, equals: false})");
  }
  if (const MapEntry* e = find_entry(entries, "description")) {
    (void)read_string(*e, "'description' " + where, diags);
  }
  const MapEntry* tasks = find_entry(entries, "tasks");
  if (tasks == nullptr) {
    diags.add(g.pos, "repeat group '" + g.name + "' has no 'tasks:' (the tasks of each round)");
  } else if (!tasks->value.IsSequence() || tasks->value.size() == 0) {
    diags.add(tasks->value_pos, "'tasks' of repeat group '" + g.name +
                                    "' must be a non-empty list of tasks, got " +
                                    (tasks->value.IsSequence() ? std::string("an empty list")
                                                               : describe_node(tasks->value)));
  } else {
    std::size_t i = 0;
    for (const YAML::Node& item : tasks->value) {
      if (is_repeat_entry(item)) {
        diags.add(position_of(item, tasks->value_pos),
                  "repeat groups cannot be nested: repeat group '" + g.name +
                      "' holds another 'repeat:' (put the inner loop in its own workflow, or "
                      "unroll it with foreach)");
        ++i;
        continue;
      }
      auto t = read_task(item, i++, defaults, budget, diags);
      if (!t) continue;
      auto clash = std::find_if(t->sweep.begin(), t->sweep.end(),
                                [](const SweepVariable& v) { return v.name == "round"; });
      if (clash != t->sweep.end()) {
        diags.add(t->sweep_pos, "foreach variable 'round' in task '" + t->name +
                                    "' clashes with repeat group '" + g.name +
                                    "', which sets {round} to the round number");
        continue;
      }
      t->sweep.insert(t->sweep.begin(), SweepVariable{"round", {"1"}});
      if (!t->sweep_pos.known()) t->sweep_pos = t->pos;
      set_env(t->env, "CHORUS_ROUND", LocatedText{"{round}", t->pos});
      g.tasks.push_back(std::move(*t));
    }
  }
  if (diags.reports() != before) return std::nullopt;
  return g;
}

}  // namespace chorus
