// SPWD (Kroczek, Zawalska, Rycerz, arXiv 2506.01567) with CBC as the exact solver of each piece:
//  1. SP-ize the DAG (sp_graph.hpp), 2. build its decomposition tree, 3. weigh it with each
//  task's mean runtime over the machine types (sp_tree.hpp), 4. prune it into subworkflows of at
//  most max_subgraph_size vertices, splitting series nodes at substitutes, 5. distribute the
//  deadline (spwd_decomposition.hpp), 6. solve each subworkflow's WSP with CBC (wsp_milp.hpp),
//  merge (a task in several pieces keeps the fastest type it got), drop synthetic vertices and
//  re-evaluate cost and makespan on the original DAG.
#pragma once

#include "schedulers/planners/graph_planner.hpp"

namespace chorus {

class SpwdPlanner final : public GraphPlanner {
 public:
  explicit SpwdPlanner(PlanOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "spwd"; }
  Result<Plan> plan(const WorkflowGraph& graph, const Platform& platform) const override;

 private:
  PlanOptions options_;
};

// The whole WSP instance in one CBC solve (the baseline SPWD is measured against). With a time
// limit the result may be feasible but unproven (stats.gap says how far from the bound).
class MilpPlanner final : public GraphPlanner {
 public:
  explicit MilpPlanner(PlanOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "milp"; }
  Result<Plan> plan(const WorkflowGraph& graph, const Platform& platform) const override;

 private:
  PlanOptions options_;
};

}  // namespace chorus
