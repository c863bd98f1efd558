// Output's forms of what the journal's commands found: list, status, endpoints, cancel, report.
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/output/output.hpp"
#include "core/units.hpp"

namespace chorus::cli {
namespace {

// "2026-11-30 08:45:12" (local time).
std::string format_time(double wall_seconds) {
  std::time_t t = static_cast<std::time_t>(wall_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

bool is_failure(TaskState s) {
  return s == TaskState::failed || s == TaskState::timed_out;
}

std::int64_t count_of(const RunStatusReport& r, TaskState s) {
  return r.counts[static_cast<std::size_t>(s)];
}

void run_status_json(const Output& out, const RunStatusReport& r) {
  const RunInfo& run = r.run;
  nlohmann::json j{{"run", run.id},
                   {"workflow", run.workflow_name},
                   {"file", run.workflow_path},
                   {"status", to_string(r.status)},
                   {"created", run.created},
                   {"updated", run.updated},
                   {"total", run.total_tasks},
                   {"not_started", r.not_started}};
  for (auto s : {TaskState::running, TaskState::succeeded, TaskState::failed, TaskState::cancelled,
                 TaskState::timed_out}) {
    j[to_string(s)] = count_of(r, s);
  }
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : r.tasks) {
    if (!r.all_tasks && !is_failure(t.state)) continue;
    tasks.push_back({{"task", t.name},
                     {"state", to_string(t.state)},
                     {"attempt", t.attempt},
                     {"exit_code", t.exit_code},
                     {"detail", t.detail}});
  }
  j["tasks"] = tasks;
  if (r.nodes) {
    nlohmann::json jn = nlohmann::json::array();
    for (const auto& n : *r.nodes) {
      jn.push_back({{"node", n.info.name},
                    {"cores", n.info.capacity.cores},
                    {"memory_mb", n.info.capacity.memory_mb},
                    {"gpus", n.info.capacity.gpus},
                    {"running", n.running},
                    {"busy_cores", n.busy_cores},
                    {"attempts", n.attempts},
                    {"failed", n.failed}});
    }
    j["nodes"] = jn;
  }
  out.json_document(j);
}

}  // namespace

void Output::run_list(const std::vector<RunInfo>& runs) const {
  if (json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : runs) {
      j.push_back({{"run", r.id},
                   {"status", to_string(r.status)},
                   {"tasks", r.total_tasks},
                   {"created", r.created},
                   {"file", r.workflow_path}});
    }
    json_document(j);
    return;
  }
  std::fprintf(out_, "%-28s %-12s %8s  %-19s  %s\n", "RUN", "STATUS", "TASKS", "STARTED", "FILE");
  for (const auto& r : runs) {
    std::fprintf(out_, "%-28s %-12s %8lld  %-19s  %s\n", r.id.c_str(), to_string(r.status),
                 static_cast<long long>(r.total_tasks), format_time(r.created).c_str(),
                 r.workflow_path.c_str());
  }
}

void Output::run_status(const RunStatusReport& r) const {
  if (json()) {
    run_status_json(*this, r);
    return;
  }
  const RunInfo& run = r.run;
  std::fprintf(out_, "run       %s (%s)\n", run.id.c_str(), to_string(r.status));
  std::fprintf(out_, "workflow  %s%s%s\n", run.workflow_name.c_str(),
               run.workflow_path.empty() ? "" : "  ", run.workflow_path.c_str());
  std::fprintf(
      out_, "started   %s, %s elapsed\n", format_time(run.created).c_str(),
      format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(r.elapsed_s * 1e9)))
          .c_str());
  std::fprintf(out_,
               "tasks     %lld total: %lld succeeded, %lld running, %lld failed, %lld timed out, "
               "%lld cancelled, %lld not started\n",
               static_cast<long long>(run.total_tasks),
               static_cast<long long>(count_of(r, TaskState::succeeded)),
               static_cast<long long>(count_of(r, TaskState::running)),
               static_cast<long long>(count_of(r, TaskState::failed)),
               static_cast<long long>(count_of(r, TaskState::timed_out)),
               static_cast<long long>(count_of(r, TaskState::cancelled)),
               static_cast<long long>(r.not_started));
  long long dropped = 0;
  for (const auto& t : r.tasks)
    dropped += t.state == TaskState::cancelled && is_dropped_detail(t.detail);
  if (dropped > 0) {
    std::fprintf(out_, "          of the cancelled, %lld dropped by quorum (not failures)\n",
                 dropped);
  }
  for (const auto& t : r.tasks) {
    if (!r.all_tasks && !is_failure(t.state)) continue;
    const std::string attempt =
        t.attempt == 0 ? "not started" : "attempt " + std::to_string(t.attempt);
    std::fprintf(out_, "  %-10s %s (%s)%s%s\n", to_string(t.state), t.name.c_str(), attempt.c_str(),
                 t.detail.empty() ? "" : ": ", t.detail.c_str());
  }
  if (r.nodes) {
    std::fprintf(out_, "nodes     %zu\n", r.nodes->size());
    for (const auto& n : *r.nodes) {
      std::string running;
      for (std::size_t i = 0; i < n.running.size() && i < 8; ++i) {
        running += (i == 0 ? ": " : ", ") + n.running[i];
      }
      if (n.running.size() > 8) running += ", ...";
      std::fprintf(out_, "  %-12s %-24s %d/%d cores busy, %zu running%s; %d attempts, %d failed\n",
                   n.info.name.c_str(), to_string(n.info.capacity).c_str(), n.busy_cores,
                   n.info.capacity.cores, n.running.size(), running.c_str(), n.attempts, n.failed);
    }
  }
  if (r.status == RunStatus::interrupted || r.status == RunStatus::failed ||
      r.status == RunStatus::cancelled) {
    std::fprintf(out_, "resume with: chorus run --resume %s\n", run.id.c_str());
  }
}

void Output::service_endpoints(const std::string& run_id,
                               const std::vector<ServiceReplica>& replicas) const {
  if (replicas.empty()) {
    std::fprintf(out_, "run '%s' has no services\n", run_id.c_str());
    return;
  }
  std::fprintf(out_, "%-28s %-32s %s\n", "SERVICE", "ENDPOINT", "STATE");
  for (const auto& r : replicas) {
    std::fprintf(out_, "%-28s %-32s %s\n", r.name.c_str(),
                 r.endpoint.empty() ? "-" : r.endpoint.c_str(), r.state.c_str());
  }
}

void Output::environment(const std::vector<std::pair<std::string, std::string>>& variables) const {
  for (const auto& [name, value] : variables) {
    std::fprintf(out_, "%s=%s\n", name.c_str(), value.c_str());
  }
}

void Output::run_already_ended(const std::string& run_id, RunStatus status) const {
  std::fprintf(out_, "%s is already %s\n", run_id.c_str(), to_string(status));
}

void Output::run_marked_cancelled(const std::string& run_id, const std::string& done) const {
  std::fprintf(out_, "%s was not running (its coordinator is gone); marked cancelled%s%s\n",
               run_id.c_str(), done.empty() ? "" : "; ", done.c_str());
}

void Output::run_cancelling(const std::string& run_id, std::int64_t coordinator_pid) const {
  std::fprintf(out_, "cancelling %s (coordinator pid %lld)...\n", run_id.c_str(),
               static_cast<long long>(coordinator_pid));
}

void Output::run_ended(const std::string& run_id, RunStatus status) const {
  std::fprintf(out_, "%s %s\n", run_id.c_str(), to_string(status));
}

void Output::report_written(const std::string& path) const {
  std::fprintf(out_, "%s\n", path.c_str());
}

}  // namespace chorus::cli
