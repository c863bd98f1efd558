// HtmlReport: one self-contained HTML page describing a run from its journal — a Gantt chart of
// every attempt on the cores it held, the allocation's utilization over time, a legend and totals.
//
// The page needs nothing at view time: the data is embedded as JSON and a small inline script
// draws it as SVG (no external scripts, styles, fonts or network). Everything here is a pure
// function of its arguments: no I/O, no clock.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/task_spec.hpp"
#include "core/task_state.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus {

// One attempt of one task: a `running` event paired with the terminal event of the same attempt.
struct ReportAttempt {
  TaskId task = kNoTask;
  std::string name;
  std::uint32_t attempt = 0;
  TaskKind kind = TaskKind::executable;
  int cores = 0;     // 0: an in-process function that holds no core
  std::string node;  // empty when the journal did not record one
  double start = 0;  // wall seconds
  double end = 0;    // the terminal event, or the report's end time when there is none
  // The attempt's outcome; `running` when the journal holds no terminal event for it (still
  // running, or the coordinator was killed).
  TaskState state = TaskState::running;
  std::string detail;
  // Filled in by pack_lanes(): the lane group (a node's cores, or a node's in-process pool) and the
  // first of the `max(cores, 1)` consecutive lanes the attempt occupies in it.
  int group = -1;
  int lane = -1;
};

// A set of lanes drawn together: the cores of one node, or its in-process function pool.
struct LaneGroup {
  std::string node;
  bool pool = false;  // in-process pool: one lane per concurrently running 0-core attempt
  int capacity = 0;   // the node's cores (0 for a pool, or when the journal did not record them)
  int lanes = 0;      // lanes drawn: at least the lanes used; the capacity when that is modest
};

struct ReportLayout {
  std::vector<LaneGroup> groups;
  std::vector<ReportAttempt> attempts;  // in start order
};

// Pairs running events with their attempt's terminal event. Attempts without a terminal event end
// at `end_time`. Terminal events without a running event (a task cancelled before it started) are
// not attempts and are skipped. An MPI attempt spread over several nodes gives one entry per node
// (with the cores it held there), consecutive in the result.
std::vector<ReportAttempt> collect_attempts(std::span<const EventRecord> events, double end_time);

// Greedy interval packing, in start order (ties: the order given): each attempt takes the lowest
// max(cores, 1) consecutive lanes of its node's group that are free at its start (a lane is free
// once the attempt on it has ended). Attempts with 0 cores go to their node's pool group. When a
// node's lanes are too fragmented for a multi-core attempt (the scheduler does not place cores
// contiguously) the group grows lanes past its capacity rather than overlapping bars; those extra
// lanes are drawn like the others. Nodes come in RunInfo::nodes order, then unknown ones by first
// use. Sorts `attempts` by start.
ReportLayout pack_lanes(const std::vector<NodeInfo>& nodes, std::vector<ReportAttempt> attempts);

struct HtmlReportOptions {
  // The end of the time axis for attempts still running (wall seconds; the caller's "now" for a
  // live run, RunInfo::updated for a finished one). 0: the latest event time.
  double end_time = 0;
  // Above this many attempts the chart draws every attempt that did not succeed plus the longest
  // successful ones up to the cap, and the page says how many it left out; utilization always
  // counts every attempt.
  std::size_t max_bars = 10'000;
};

// The complete HTML document.
std::string render_html_report(const RunInfo& run, std::span<const EventRecord> events,
                               const HtmlReportOptions& options = {});

}  // namespace chorus
