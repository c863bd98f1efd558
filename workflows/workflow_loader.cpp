#include "workflows/workflow_loader.hpp"

#include <filesystem>
#include <system_error>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "workflows/diagnostic_list.hpp"
#include "workflows/graph_builder.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/placeholder.hpp"
#include "workflows/task_reader.hpp"
#include "workflows/workflow_source.hpp"

namespace chorus {
namespace {

const KeyChecker& top_level_keys() {
  static const KeyChecker checker = [] {
    const std::string top =
        " (the top level holds name, description, defaults, tasks, workdir, env)";
    std::vector<std::pair<std::string, std::string>> misplaced;
    for (const char* k : {"cores", "memory", "gpus", "retries", "timeout", "shell"}) {
      misplaced.emplace_back(k, "'" + std::string(k) +
                                    "' cannot be set at the top level; put it under 'defaults:' "
                                    "to apply it to every task");
    }
    for (const char* k : {"command", "after", "foreach", "outputs", "inputs", "estimate", "kind"}) {
      misplaced.emplace_back(k, "'" + std::string(k) + "' belongs in a task under 'tasks:'" + top);
    }
    return KeyChecker({"name", "description", "defaults", "tasks", "workdir", "env"},
                      {"services", "scheduler", "user"}, std::move(misplaced));
  }();
  return checker;
}

Position mark_position(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p =
      dir.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(dir);
  if (!p.is_absolute()) p = std::filesystem::absolute(p, ec);
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string default_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? "workflow" : stem;
}

// The top-level map into `graph` (name, workdir, tasks). Returns false when diagnostics were added.
bool read_workflow(const YAML::Node& root, const std::string& path,
                   const WorkflowLoadOptions& options, WorkflowGraph& graph,
                   DiagnosticList& diags) {
  if (!root.IsMap()) {
    diags.add(position_of(root, {1, 1}),
              "the top level of a workflow must be a map with 'tasks:' (and optionally name, "
              "defaults, env, workdir), got " +
                  describe_node(root));
    return false;
  }
  const std::vector<MapEntry> entries = top_level_keys().check(root, "at the top level", diags);

  graph.name = default_name(path);
  if (const MapEntry* e = find_entry(entries, "name")) {
    auto name = read_string(*e, "'name'", diags);
    if (name && name->empty()) diags.add(e->value_pos, "'name' must not be empty");
    if (name && !name->empty()) graph.name = *name;
  }
  if (const MapEntry* e = find_entry(entries, "description"))
    (void)read_string(*e, "'description'", diags);

  TaskDefaults base;
  graph.workdir = absolute_dir(options.base_dir);
  if (const MapEntry* e = find_entry(entries, "workdir")) {
    if (auto w = read_string(*e, "'workdir'", diags)) {
      auto text = substitute_placeholders(*w, {}, "in the workflow's workdir");
      if (!text.ok()) {
        diags.add(e->value_pos, text.status().message());
      } else if (text->empty()) {
        diags.add(e->value_pos, "'workdir' must not be empty");
      } else {
        graph.workdir = absolute_dir((std::filesystem::path(graph.workdir) / *text).string());
      }
    }
  }
  if (const MapEntry* e = find_entry(entries, "env")) {
    if (auto env = read_env_map(*e, "the top-level env", diags)) {
      for (auto& [k, v] : *env) set_env(base.env, k, std::move(v));
    }
  }
  const TaskDefaults defaults =
      read_defaults(find_entry(entries, "defaults"), std::move(base), diags);

  const MapEntry* tasks = find_entry(entries, "tasks");
  if (tasks == nullptr) {
    diags.add(position_of(root, {1, 1}), "the workflow has no 'tasks:' list");
    return false;
  }
  if (!tasks->value.IsSequence()) {
    diags.add(tasks->value_pos, "'tasks' must be a list of tasks (each '- name: ...'), got " +
                                    describe_node(tasks->value));
    return false;
  }
  if (tasks->value.size() == 0) {
    diags.add(tasks->value_pos, "'tasks' is empty: a workflow needs at least one task");
    return false;
  }
  std::vector<TaskTemplate> templates;
  templates.reserve(tasks->value.size());
  std::size_t index = 0;
  for (const YAML::Node& node : tasks->value) {
    if (auto t = read_task(node, index++, defaults, diags)) templates.push_back(std::move(*t));
  }
  if (!diags.empty()) return false;

  GraphLimits limits;
  limits.max_tasks = kMaxWorkflowTasks;
  limits.largest_node = options.largest_node;
  limits.machine_phrase = options.machine_phrase;
  return GraphBuilder(std::move(templates), std::move(limits), diags).build(graph);
}

}  // namespace

Result<WorkflowGraph> parse_workflow_text(std::string_view text,
                                          const std::string& path_for_messages,
                                          const WorkflowLoadOptions& options) {
  DiagnosticList diags(path_for_messages);
  if (!check_workflow_text(text, kMaxWorkflowFileBytes, kMaxWorkflowNesting, diags)) {
    return diags.to_status();
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    diags.add(mark_position(e.mark), "nesting is too deep for a workflow file");
    return diags.to_status();
  } catch (const YAML::Exception& e) {
    diags.add(mark_position(e.mark), "YAML syntax error: " + e.msg);
    return diags.to_status();
  }
  if (docs.empty() || docs.front().IsNull()) {
    diags.add({},
              "the file holds no workflow (only comments or blank lines); it needs at least "
              "'tasks:'");
    return diags.to_status();
  }
  for (std::size_t i = 1; i < docs.size(); ++i) {
    if (docs[i].IsNull()) continue;
    diags.add(position_of(docs[i]),
              "a workflow file holds one YAML document; a second one "
              "starts here (remove the '---' or split the file)");
    return diags.to_status();
  }
  WorkflowGraph graph;
  graph.source_path = path_for_messages;
  try {
    if (!read_workflow(docs.front(), path_for_messages, options, graph, diags)) {
      return diags.to_status();
    }
  } catch (const YAML::Exception& e) {
    // Every access is type-checked first; reaching this is a bug, reported rather than thrown.
    diags.add(mark_position(e.mark), "internal error while reading the workflow: " + e.msg);
    return diags.to_status();
  }
  return graph;
}

Result<WorkflowGraph> load_workflow_file(const std::string& path,
                                         const WorkflowLoadOptions& options) {
  auto text = read_workflow_source(path, kMaxWorkflowFileBytes);
  if (!text.ok()) {
    return Status(text.status().code(), Diagnostic{path, 0, 0, text.status().message()}.format());
  }
  auto graph = parse_workflow_text(*text, path, options);
  if (!graph.ok()) return graph;
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  graph->source_path = ec ? path : abs.lexically_normal().string();
  return graph;
}

}  // namespace chorus
