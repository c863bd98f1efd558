// GraphBuilder: turns the TaskTemplates of one file into a WorkflowGraph: checks names,
// placeholders and resource requests, resolves `after` references, expands sweeps and finds
// dependency cycles. Each phase reports into the DiagnosticList; build() stops after the first
// phase that reported anything, so later phases never see inconsistent input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/resources.hpp"
#include "core/workflow_graph.hpp"
#include "workflows/diagnostic_list.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

struct GraphLimits {
  std::uint64_t max_tasks = 1'000'000;
  // Dependency edges after expansion (a sweep after a sweep is a full bipartite join).
  std::uint64_t max_edges = 20'000'000;
  Resources largest_node;  // cores == 0: unknown, nothing is checked; memory_mb == 0: unchecked
  std::string machine_phrase = "this machine";
};

class GraphBuilder {
 public:
  GraphBuilder(std::vector<TaskTemplate> templates, GraphLimits limits, DiagnosticList& diags)
      : templates_(std::move(templates)), limits_(std::move(limits)), diags_(diags) {}

  // Fills graph.tasks; graph.workdir (absolute) must be set: relative task workdirs resolve
  // against it. On failure returns false and the diagnostics say why.
  bool build(WorkflowGraph& graph);

 private:
  // A resolved `after` entry: all members of a template, or one member.
  struct Target {
    std::size_t tmpl;
    std::uint64_t member;  // kAll for every member
  };
  static constexpr std::uint64_t kAll = ~std::uint64_t{0};

  void check_templates();
  void check_placeholders(const TaskTemplate& t);
  void check_fits(const TaskTemplate& t);
  // Resolves `ref` written in template `from`; reports and returns nullopt when unknown.
  std::optional<Target> resolve(std::size_t from, const LocatedText& ref);
  std::optional<std::uint64_t> find_member(std::size_t tmpl, const std::string& name);
  // Refuses, before allocating anything, a graph with more than max_edges dependency links.
  bool check_edge_count(const std::vector<std::vector<std::optional<Target>>>& fixed);
  bool expand(WorkflowGraph& graph);
  void check_cycles(const WorkflowGraph& graph);

  std::vector<TaskTemplate> templates_;
  GraphLimits limits_;
  DiagnosticList& diags_;
  std::vector<std::uint64_t> first_id_;  // first task id of each template; back() = task count
  std::unordered_map<std::string, std::size_t> by_name_;
  // Member name -> index, built only for sweeps that some `after` names a member of.
  std::unordered_map<std::size_t, std::unordered_map<std::string, std::uint64_t>> members_;
};

}  // namespace chorus
