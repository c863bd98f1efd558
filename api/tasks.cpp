#include "api/tasks.hpp"

namespace chorus {

TaskSpec command_task(std::string name, std::vector<std::string> argv, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::executable;
  t.cmd.argv = std::move(argv);
  t.after = std::move(after);
  return t;
}

TaskSpec shell_task(std::string name, std::string script, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::executable;
  t.cmd.shell = std::move(script);
  t.after = std::move(after);
  return t;
}

TaskSpec function_task(std::string name, TaskFunction fn, std::vector<TaskId> after) {
  TaskSpec t;
  t.name = std::move(name);
  t.kind = TaskKind::function;
  t.fn = std::move(fn);
  t.per_rank.cores = 0;
  t.after = std::move(after);
  return t;
}

}  // namespace chorus
