// GraphBuilder: turns the TaskTemplates, services and repeat groups of one file into a
// WorkflowGraph: checks names, placeholders and resource requests, resolves `after` and `uses`
// references, expands sweeps and service replicas, builds repeat groups (round 1, the gate and
// the closures for later rounds) and finds dependency cycles. Each phase reports into the
// DiagnosticList; build() stops after the first phase that reported anything, so later phases never
// see inconsistent input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/resources.hpp"
#include "core/workflow_graph.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/repeat_reader.hpp"
#include "workflows/service_reader.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

struct GraphLimits {
  std::uint64_t max_tasks = 1'000'000;
  // Dependency edges after expansion (a sweep after a sweep is a full bipartite join).
  std::uint64_t max_edges = 20'000'000;
  // The text of all tasks after expansion (member_text_bytes() per member and replica).
  std::uint64_t max_text_bytes = 512 * 1024 * 1024;
  Resources largest_node;  // cores == 0: unknown, nothing is checked; memory_mb == 0: unchecked
  std::string machine_phrase = "this machine";
  std::vector<Resources> nodes;  // every node's capacity, when known: MPI tasks may spread
  bool containers = false;       // WorkflowLoadOptions::containers
};

class GraphBuilder {
 public:
  // `templates`: the entries of `tasks:` in file order, where each repeat group is its tasks
  // (`group` = the group's index in `groups`) followed by its gate (`gate` = true, named like
  // the group, `after` = the group's `after`). `groups[g].tasks` is not used.
  GraphBuilder(std::vector<TaskTemplate> templates, std::vector<ServiceTemplate> services,
               std::vector<RepeatTemplate> groups, GraphLimits limits, DiagnosticList& diags)
      : templates_(std::move(templates)),
        services_(std::move(services)),
        groups_(std::move(groups)),
        limits_(std::move(limits)),
        diags_(diags) {}

  // Fills graph.tasks (the tasks of `tasks:` in file order, each group's round 1 followed by its
  // gate, then the replicas of each service), graph.services and graph.repeats. graph.workdir
  // (absolute) and graph.source_path must be set: relative task workdirs resolve against the
  // former; the latter names the file in the errors of repeat groups. On failure returns false
  // and the diagnostics say why.
  bool build(WorkflowGraph& graph);

 private:
  // A resolved `after` entry: all members of a template, or one member.
  struct Target {
    std::size_t tmpl;
    std::uint64_t member;  // kAll for every member
  };
  static constexpr std::uint64_t kAll = ~std::uint64_t{0};

  void check_templates();
  void check_services();
  void check_placeholders(const TaskTemplate& t);
  // Counts the text `members` copies of `t` would hold; reports the template that passes
  // limits_.max_text_bytes (once).
  void check_text_size(const TaskTemplate& t, std::uint64_t members);
  void check_fits(const TaskTemplate& t);
  // With limits_.containers: refuses a task or service without an image and an MPI task whose
  // ranks would span Pods. True when it reported (check_fits is then skipped for an MPI task).
  bool check_container(const TaskTemplate& t);
  // check_fits for an MPI task that may spread over limits_.nodes.
  void check_spread_fits(const TaskTemplate& t);
  // "task 'a'" or "repeat group 'c'" (a gate) for messages about template `i`.
  std::string describe(std::size_t i) const;
  // Resolves `ref` written in template `from`; reports and returns nullopt when unknown or not
  // allowed (a service, a task inside a repeat group from outside it, a group from inside).
  std::optional<Target> resolve(std::size_t from, const LocatedText& ref);
  // Whether template `from` may depend on template `to`; reports when not.
  bool check_group_access(std::size_t from, std::size_t to, const LocatedText& ref);
  // The services template `i` uses; reports unknown names.
  std::vector<ServiceId> resolve_uses(std::size_t i);
  void add_services(WorkflowGraph& graph);
  std::optional<std::uint64_t> find_member(std::size_t tmpl, const std::string& name);
  // Refuses, before allocating anything, a graph with more than max_edges dependency links.
  bool check_edge_count(const std::vector<std::vector<std::optional<Target>>>& fixed);
  bool expand(WorkflowGraph& graph);
  void check_cycles(const WorkflowGraph& graph);

  std::vector<TaskTemplate> templates_;
  std::vector<ServiceTemplate> services_;
  std::vector<RepeatTemplate> groups_;
  GraphLimits limits_;
  DiagnosticList& diags_;
  std::uint64_t text_bytes_ = 0;
  bool text_over_ = false;
  std::vector<std::uint64_t> first_id_;  // first task id of each template; back() = task count
  std::unordered_map<std::string, std::size_t> by_name_;
  std::unordered_map<std::string, std::size_t> service_by_name_;
  std::vector<std::size_t> group_first_;      // per group: the template index of its first task
  std::vector<std::size_t> group_gate_;       // per group: the template index of its gate
  std::vector<std::vector<ServiceId>> uses_;  // per template
  // Member name -> index, built only for sweeps that some `after` names a member of.
  std::unordered_map<std::size_t, std::unordered_map<std::string, std::uint64_t>> members_;
};

}  // namespace chorus
