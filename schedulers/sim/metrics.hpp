// Metrics of one simulated run: response times per job-size class, tails, slowdown, fairness
// between users and violations of an ideal processor-sharing schedule.
//
// Definitions:
// - Per-class figures are NaN (null in JSON) when the run has no job of that class.
// - response = finish - arrival; p90 is the nearest-rank 90th percentile; worst10 is the mean of
//   the slowest 10% of responses (at least one job).
// - slowdown = response / runtime alone (JobRecord::alone_s); mean over jobs.
// - small_mean_alone_s: the small jobs' mean runtime alone, the floor of their mean response
//   (no policy does better without preemption or more cores).
// - size class: as the workload says; jobs without one are small when their work is at most the
//   median work of the run's jobs, large otherwise.
// - jain_users: Jain's index (Σx)² / (n·Σx²) over users of x_u = received / entitled service
//   (UserShare): 1 when every user got exactly its max-min fair share while it had work.
// - fair_attainment_jain, fair_attainment_min: for unequal demands (issue 18). Each user's
//   attainment a_u = min(1, Σ ideal response / Σ response) over its jobs, the ideal being the
//   user-fair fluid schedule below (ideal response = ideal finish - arrival): 1 when the user's
//   jobs, together, did no worse than under an equal split of the cluster between the users with
//   work, each user's work measured against its own demand. Jain's index of the a_u, and the
//   smallest a_u (the worst-treated user). Unlike jain_users it does not count a user served
//   ahead of its instantaneous share (a short job finishing early) as unfair, and it weighs a
//   user with one 1 core-s job as much as one with 10,000 core-s: a user is treated unfairly
//   when its own jobs take longer than its fair share would have made them, whatever the others.
// - deadline_violation_ratio: the fraction of jobs finishing later than they would in the ideal
//   schedule, where users share the cluster as a fluid in proportion to their weights and each
//   user's jobs run one after the other in arrival order (a job's ideal finish is also never
//   earlier than arrival + runtime alone). A small tolerance (1 ms) absorbs rounding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schedulers/sim/simulator.hpp"

namespace chorus::sim {

struct Metrics {
  std::size_t jobs = 0;
  std::size_t small_jobs = 0;
  std::size_t large_jobs = 0;
  double mean_response_s = 0;
  double p90_response_s = 0;
  double worst10_response_s = 0;
  double small_mean_response_s = 0;
  double small_mean_alone_s = 0;
  double small_p90_response_s = 0;
  double large_mean_response_s = 0;
  double large_p90_response_s = 0;
  double mean_slowdown = 0;
  double large_mean_slowdown = 0;
  double jain_users = 0;
  double fair_attainment_jain = 0;
  double fair_attainment_min = 0;
  double deadline_violation_ratio = 0;
  double makespan_s = 0;
};

// Ideal finish time of each job (same order as `jobs`) on `capacity` cores.
std::vector<double> ideal_finish_times(const std::vector<JobRecord>& jobs, double capacity,
                                       const std::map<std::string, double>& user_weights);

// Jain's index of the values (1 for an empty or all-zero list).
double jain_index(const std::vector<double>& x);

Metrics compute_metrics(const SimResult& run, double capacity,
                        const std::map<std::string, double>& user_weights = {});

// The metrics as one JSON object (keys as the field names).
std::string metrics_json(const Metrics& m);

}  // namespace chorus::sim
