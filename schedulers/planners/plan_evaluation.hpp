// Evaluating an assignment of tasks to machine types on the original DAG, and the deadline rules
// shared by every planner.
#pragma once

#include <vector>

#include "core/status.hpp"
#include "core/workflow_graph.hpp"
#include "schedulers/planners/graph_planner.hpp"
#include "schedulers/planners/platform.hpp"

namespace chorus {

// Seconds per task at speed 1.0 (TaskSpec::estimate).
std::vector<double> task_runtimes(const WorkflowGraph& graph);

// Longest path of the DAG where task t takes duration[t]; fills finish (and start) times.
double longest_path(const WorkflowGraph& graph, const std::vector<double>& duration,
                    std::vector<double>* start = nullptr, std::vector<double>* finish = nullptr);

// The paper's default: the critical path with every task at the mean speed of the platform.
double default_deadline(const WorkflowGraph& graph, const Platform& platform);

// The critical path with every task on the fastest type: no plan can do better.
double fastest_makespan(const WorkflowGraph& graph, const Platform& platform);

// Validates platform and graph, picks the deadline (options or default) and rejects one below
// the fastest possible makespan. Returns the deadline in seconds.
Result<double> resolve_deadline(const WorkflowGraph& graph, const Platform& platform,
                                const PlanOptions& options);

// Fills cost, start/finish (earliest start, unlimited machines of each type), makespan and
// deadline_met from plan.type. Returns an internal error when plan.type has the wrong size.
Status evaluate_plan(const WorkflowGraph& graph, const Platform& platform, Plan& plan);

// "812 s", "3.25 s".
std::string format_seconds(double s);

}  // namespace chorus
