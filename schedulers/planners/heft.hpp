// HEFT (Topcuoglu, Hariri, Wu 2002): list scheduling by upward rank onto heterogeneous
// processors, each task to the processor giving its earliest finish time, with insertion into
// idle gaps.
//
// heft_schedule() is the textbook algorithm on an explicit cost matrix and communication costs
// (a communication cost is paid only between different processors). HeftPlanner applies it to a
// workflow: every core of every machine is a processor, a task takes runtime / speed on it, and
// data transfers cost nothing (platforms carry no network model yet). Ties in rank go to the
// lower task index, ties in finish time to the lower processor index.
#pragma once

#include <string_view>
#include <vector>

#include "schedulers/planners/graph_planner.hpp"

namespace chorus {

struct HeftEdge {
  std::size_t from = 0;
  std::size_t to = 0;
  double comm = 0;  // transfer time when the two tasks run on different processors
};

struct HeftProblem {
  std::size_t tasks = 0;
  std::size_t processors = 0;
  std::vector<double> cost;  // tasks x processors, row-major: cost[t * processors + p]
  std::vector<HeftEdge> edges;
};

struct HeftSchedule {
  std::vector<std::size_t> processor;  // per task
  std::vector<double> start;
  std::vector<double> finish;
  std::vector<double> upward_rank;
  std::vector<std::size_t> order;  // tasks in scheduling order
  double makespan = 0;
};

// The problem must be a DAG with cost.size() == tasks * processors and processors >= 1.
HeftSchedule heft_schedule(const HeftProblem& problem);

class HeftPlanner final : public GraphPlanner {
 public:
  explicit HeftPlanner(PlanOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "heft"; }
  Result<Plan> plan(const WorkflowGraph& graph, const Platform& platform) const override;

 private:
  PlanOptions options_;
};

}  // namespace chorus
