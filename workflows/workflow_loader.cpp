#include "workflows/workflow_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <new>
#include <sstream>
#include <system_error>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include "core/text.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/document_check.hpp"
#include "workflows/graph_builder.hpp"
#include "workflows/key_checker.hpp"
#include "workflows/node_reader.hpp"
#include "workflows/placeholder.hpp"
#include "workflows/quorum_reader.hpp"
#include "workflows/repeat_reader.hpp"
#include "workflows/service_reader.hpp"
#include "workflows/task_reader.hpp"
#include "workflows/workflow_source.hpp"

namespace chorus {
namespace {

const KeyChecker& top_level_keys() {
  static const KeyChecker checker = [] {
    const std::string top =
        " (the top level holds name, description, user, scheduler, defaults, sources, services, "
        "tasks, workdir, env)";
    std::vector<std::pair<std::string, std::string>> misplaced;
    for (const char* k :
         {"cores", "memory", "gpus", "retries", "timeout", "shell", "image", "image_pull_policy"}) {
      misplaced.emplace_back(k, "'" + std::string(k) +
                                    "' cannot be set at the top level; put it under 'defaults:' "
                                    "to apply it to every task");
    }
    for (const char* k :
         {"command", "after", "foreach", "outputs", "inputs", "estimate", "kind", "uses", "data"}) {
      misplaced.emplace_back(k, "'" + std::string(k) + "' belongs in a task under 'tasks:'" + top);
    }
    misplaced.emplace_back("repeat",
                           "'repeat' blocks are entries of 'tasks:' ('- repeat: NAME' with "
                           "max_rounds, until and tasks)");
    return KeyChecker({"name", "description", "user", "scheduler", "defaults", "sources",
                       "services", "tasks", "workdir", "env"},
                      {}, std::move(misplaced));
  }();
  return checker;
}

Position mark_position(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

// The graph planners a workflow may name. workflows/ cannot see schedulers/planners (which
// depends on it), so the list lives here; cli/live_plan maps each name to its planner.
const std::vector<std::string>& known_planners() {
  static const std::vector<std::string> names{"heft", "spwd"};
  return names;
}

// `mss: 50` (vertices, at least 2) or `mss: 10%` (of the task count).
void read_planner_mss(const MapEntry& e, SchedulerChoice& out, DiagnosticList& diags) {
  const std::string expected =
      "'mss' in 'scheduler' must be a vertex count of at least 2 or a percentage such as 10%, got ";
  if (!e.value.IsScalar()) {
    diags.add(e.value_pos, expected + describe_node(e.value));
    return;
  }
  const std::string& text = e.value.Scalar();
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  const bool parsed = !number.empty() && end == number.c_str() + number.size() && std::isfinite(v);
  const bool valid = parsed && (percent ? v > 0 && v <= 100 : v >= 2 && v == std::floor(v));
  if (!valid) {
    diags.add(e.value_pos, expected + "'" + text + "'");
    return;
  }
  out.planner_mss = v;
  out.planner_mss_percent = percent;
}

// `planner: heft|spwd` with its options `mss` (spwd only) and `deadline`. The planner decides the
// order and the placement, so it excludes `queue`, `placement` and `weights`.
void check_planner_choice(const std::vector<MapEntry>& entries, DiagnosticList& diags) {
  const MapEntry* planner = find_entry(entries, "planner");
  const std::string name =
      planner != nullptr && planner->value.IsScalar() ? planner->value.Scalar() : std::string{};
  if (planner != nullptr) {
    // The policies' names and their options (every key that is not the planner's).
    for (const MapEntry& other : entries) {
      if (other.key == "planner" || other.key == "mss" || other.key == "deadline") continue;
      diags.add(planner->key_pos, "'planner' cannot be combined with '" + other.key +
                                      "' in 'scheduler': the plan decides both the order and "
                                      "the placement of tasks");
    }
  }
  for (const char* option : {"mss", "deadline"}) {
    const MapEntry* e = find_entry(entries, option);
    if (e == nullptr) continue;
    if (planner == nullptr) {
      diags.add(e->key_pos,
                "'" + std::string(option) + "' in 'scheduler' is an option of a planner: add " +
                    (std::string(option) == "mss" ? "'planner: spwd'"
                                                  : "'planner: heft' or 'planner: spwd'") +
                    " (or remove it)");
    } else if (std::string(option) == "mss" && name != "spwd") {
      diags.add(e->key_pos, "'mss' in 'scheduler' applies to 'planner: spwd' only");
    }
  }
}

// `scheduler: {queue: uwfq, placement: first-fit, weights: {alice: 2, bob: 1}}` or
// `scheduler: {planner: spwd, mss: 10%, deadline: 2h}`. Policy names and their options (every
// other key) are checked by the policies (WorkflowLoadOptions::check_scheduler; workflows/ does
// not know them); planner names here.
void read_scheduler(const MapEntry& section, SchedulerChoice& out, DiagnosticList& diags) {
  if (!section.value.IsMap()) {
    diags.add(section.value_pos, "'scheduler' must be a map such as {queue: uwfq}, got " +
                                     describe_node(section.value));
    return;
  }
  const std::vector<MapEntry> entries = map_entries(section.value, "in 'scheduler'", diags);
  check_planner_choice(entries, diags);
  for (const MapEntry& e : entries) {
    if (e.key == "queue" || e.key == "placement") {
      auto name = read_string(e, "'" + e.key + "' in 'scheduler'", diags);
      if (!name) continue;
      if (name->empty()) {
        diags.add(e.value_pos, "'" + e.key + "' in 'scheduler' must name a policy");
        continue;
      }
      bool queue = e.key == "queue";
      (queue ? out.queue : out.placement) = *name;
      (queue ? out.queue_at : out.placement_at) = {diags.path(), e.value_pos.line,
                                                   e.value_pos.column};
    } else if (e.key == "planner") {
      auto name = read_string(e, "'planner' in 'scheduler'", diags);
      if (!name) continue;
      const auto& known = known_planners();
      if (std::find(known.begin(), known.end(), *name) == known.end()) {
        diags.add(e.value_pos, "unknown planner '" + *name + "' in 'scheduler'" +
                                   did_you_mean(*name, known) + "; known: " + join(known));
        continue;
      }
      out.planner = *name;
      out.planner_line = e.value_pos.line;
      out.planner_column = e.value_pos.column;
    } else if (e.key == "mss") {
      read_planner_mss(e, out, diags);
    } else if (e.key == "deadline") {
      auto d = read_duration(e, "'deadline' in 'scheduler'", diags);
      if (!d) continue;
      if (*d <= Duration::zero()) {
        diags.add(e.value_pos, "'deadline' in 'scheduler' must be positive");
        continue;
      }
      out.planner_deadline = *d;
    } else {
      out.options.entries.push_back({e.key,
                                     {diags.path(), e.key_pos.line, e.key_pos.column},
                                     option_value(e.value, e.value_pos, diags.path()),
                                     {}});
    }
  }
}

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The weights tasks give their jobs (`job: {name: ..., weight: w}`), by job; a job weighed
// differently by two tasks is an error at the second.
void collect_job_weights(const std::vector<TaskTemplate>& templates, SchedulerChoice& out,
                         DiagnosticList& diags) {
  std::map<std::string, const TaskTemplate*> first;
  for (const TaskTemplate& t : templates) {
    if (t.job_weight <= 0) continue;
    auto [it, fresh] = first.emplace(t.job, &t);
    if (fresh) {
      out.job_weights[t.job] = t.job_weight;
    } else if (it->second->job_weight != t.job_weight) {
      const TaskTemplate& o = *it->second;
      diags.add(t.job_weight_pos, "job '" + t.job + "' is given weight " +
                                      format_number(t.job_weight) + " in task '" + t.name +
                                      "' but " + format_number(o.job_weight) + " in task '" +
                                      o.name + "' (line " + std::to_string(o.job_weight_pos.line) +
                                      "): a job has one weight");
    }
  }
}

// The documents of a YAML text, seen through the parser's events: whether the parser stalls, and
// where the second document with content starts. yaml-cpp 0.7's LoadAll never ends on some
// inputs (`&",`): its parser keeps returning an empty document without consuming anything
// (fixed upstream after 0.8, jbeder/yaml-cpp#1319). Here a document that starts where the
// previous one did ends the scan, and only the first document is built (YAML::Load).
class DocumentScan final : public YAML::EventHandler {
 public:
  struct Outcome {
    bool stalled = false;
    YAML::Mark stall_mark;
    bool second = false;  // a second document with content
    YAML::Mark second_mark;
  };

  // Throws YAML::Exception on syntax errors, as YAML::LoadAll does.
  static Outcome scan(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentScan events;
    Outcome out;
    int with_content = 0;
    bool first = true;
    YAML::Mark previous;
    while (parser.HandleNextDocument(events)) {
      if (!first && events.start_.pos == previous.pos) {
        out.stalled = true;
        out.stall_mark = events.start_;
        return out;
      }
      first = false;
      previous = events.start_;
      if (!events.content_) continue;
      if (++with_content == 2) {
        out.second = true;
        out.second_mark = events.content_mark_;
        return out;
      }
    }
    return out;
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    content_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { saw(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    saw(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    saw(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    saw(mark);
  }
  void OnMapEnd() override {}

 private:
  void saw(const YAML::Mark& mark) {
    if (!content_) content_mark_ = mark;
    content_ = true;
  }

  YAML::Mark start_;
  bool content_ = false;
  YAML::Mark content_mark_;
};

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
  if (const MapEntry* e = find_entry(entries, "scheduler"))
    read_scheduler(*e, graph.scheduler, diags);

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
  if (const MapEntry* e = find_entry(entries, "user")) {
    if (auto u = read_string(*e, "'user'", diags)) {
      if (u->empty()) diags.add(e->value_pos, "'user' must not be empty");
      base.user = *u;
    }
  }
  graph.sources = read_sources(find_entry(entries, "sources"), diags);
  base.sources = &graph.sources;
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
  TextBudget budget(options.max_text_bytes);
  std::vector<ServiceTemplate> services;
  if (const MapEntry* e = find_entry(entries, "services")) {
    // Services do not inherit `uses:` from defaults (a service cannot use a service).
    TaskDefaults service_defaults = defaults;
    service_defaults.uses.clear();
    services = read_services(*e, service_defaults, budget, diags);
  }
  // A repeat group becomes its tasks (marked with the group's index) followed by its gate.
  std::vector<TaskTemplate> templates;
  std::vector<RepeatTemplate> groups;
  templates.reserve(tasks->value.size());
  std::size_t index = 0;
  for (const YAML::Node& node : tasks->value) {
    if (is_repeat_entry(node)) {
      auto g = read_repeat(node, index++, defaults, budget, diags);
      if (!g) continue;
      const int group = static_cast<int>(groups.size());
      for (TaskTemplate& t : g->tasks) {
        t.group = group;
        templates.push_back(std::move(t));
      }
      g->tasks.clear();
      TaskTemplate gate;
      gate.name = g->name;
      gate.pos = g->pos;
      gate.kind = TaskKind::function;
      gate.per_rank = Resources{0, 0, 0};
      gate.group = group;
      gate.gate = true;
      gate.after = g->after;
      templates.push_back(std::move(gate));
      groups.push_back(std::move(*g));
      continue;
    }
    if (auto t = read_task(node, index++, defaults, budget, diags))
      templates.push_back(std::move(*t));
  }
  collect_job_weights(templates, graph.scheduler, diags);
  {
    std::vector<std::string> group_names;
    for (const RepeatTemplate& g : groups) group_names.push_back(g.name);
    check_quorums(templates, group_names, options.check_quorum, diags);
    // The group's other tasks learn what closed from the round's quorum file.
    for (const TaskTemplate& q : templates) {
      if (!q.quorum || q.group == kNoGroup) continue;
      const LocatedText file{
          quorum_file_pattern(graph.workdir, group_names[static_cast<std::size_t>(q.group)]),
          q.quorum->pos};
      for (TaskTemplate& t : templates) {
        if (t.group == q.group && !t.gate && !t.quorum) set_env(t.env, "CHORUS_QUORUM_FILE", file);
      }
    }
  }
  if (options.check_scheduler && graph.scheduler.planner.empty() &&
      find_entry(entries, "scheduler") != nullptr) {
    for (const OptionIssue& issue : options.check_scheduler(graph.scheduler))
      diags.add({issue.at.line, issue.at.column}, issue.message);
  }
  if (!diags.empty()) return false;

  GraphLimits limits;
  limits.max_tasks = options.max_tasks;
  limits.max_text_bytes = options.max_text_bytes;
  limits.largest_node = options.largest_node;
  limits.machine_phrase = options.machine_phrase;
  limits.nodes = options.nodes;
  limits.containers = options.containers;
  return GraphBuilder(std::move(templates), std::move(services), std::move(groups),
                      std::move(limits), diags)
      .build(graph);
}

}  // namespace

Result<WorkflowGraph> parse_workflow_text(std::string_view text,
                                          const std::string& path_for_messages,
                                          const WorkflowLoadOptions& options) {
  DiagnosticList diags(path_for_messages);
  diags.set_source(text);
  if (!check_workflow_text(text, kMaxWorkflowFileBytes, kMaxWorkflowNesting, diags)) {
    return diags.to_status();
  }
  YAML::Node root;
  DocumentScan::Outcome scan;
  try {
    const std::string copy(text);
    scan = DocumentScan::scan(copy);
    if (!scan.stalled) root = YAML::Load(copy);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    diags.add(mark_position(e.mark), "nesting is too deep for a workflow file");
    return diags.to_status();
  } catch (const YAML::Exception& e) {
    diags.add(mark_position(e.mark), "YAML syntax error: " + e.msg);
    return diags.to_status();
  }
  if (scan.stalled) {
    diags.add(mark_position(scan.stall_mark),
              "YAML syntax error: the parser cannot read past this point");
    return diags.to_status();
  }
  if (!root.IsDefined() || root.IsNull()) {
    diags.add({1, 1},
              "the file holds no workflow (only comments or blank lines); it needs at least "
              "'tasks:'");
    return diags.to_status();
  }
  if (scan.second) {
    diags.add(mark_position(scan.second_mark),
              "a workflow file holds one YAML document; a second one "
              "starts here (remove the '---' or split the file)");
    return diags.to_status();
  }
  WorkflowGraph graph;
  graph.source_path = path_for_messages;
  try {
    if (!check_document(root, kMaxWorkflowDocumentBytes, diags)) return diags.to_status();
    if (!read_workflow(root, path_for_messages, options, graph, diags)) {
      return diags.to_status();
    }
  } catch (const YAML::Exception& e) {
    // Every access is type-checked first; reaching this is a bug, reported rather than thrown.
    diags.add(mark_position(e.mark), "internal error while reading the workflow: " + e.msg);
    return diags.to_status();
  } catch (const std::bad_alloc&) {
    // The budgets above keep every file well inside memory; this is the last line, not a limit.
    diags.add({}, "out of memory while reading the workflow");
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
