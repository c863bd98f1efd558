// Reads a `repeat:` entry of `tasks:` (a group of tasks run in rounds) into a RepeatTemplate.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/task_template.hpp"
#include "workflows/text_budget.hpp"
#include "workflows/until_condition.hpp"

namespace chorus {

inline constexpr int kMaxRepeatRounds = 10'000;

struct RepeatTemplate {
  std::string name;
  Position pos;  // the group's name (its `repeat:` value)
  int max_rounds = 1;
  std::vector<LocatedText> after;  // tasks outside the group that round 1 waits for
  UntilCondition until;
  // The group's tasks as read, each with the variable `round` (value "1") first in its sweep
  // and CHORUS_ROUND={round} in its env; `group` is not set yet.
  std::vector<TaskTemplate> tasks;
};

// Whether the `tasks:` entry `node` is a repeat group (a map with a `repeat` key).
bool is_repeat_entry(const YAML::Node& node);

// Reads the repeat group `node` (is_repeat_entry) at `index` of `tasks:`. nullopt when it is
// unusable; diagnostics say why.
std::optional<RepeatTemplate> read_repeat(const YAML::Node& node, std::size_t index,
                                          const TaskDefaults& defaults, TextBudget& budget,
                                          DiagnosticList& diags);

}  // namespace chorus
