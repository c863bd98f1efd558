// ServedInstance: one long-lived coordinator that many users submit workflows into (what
// `chorus serve` runs; embeddable). Each submission becomes a run of its own in the state
// folder's journal, readable by every journal command, while one coordinator holds the tasks of
// all runs, so the queue policy (UWFQ by default) orders every user's ready tasks together.
//
// Accepting a submission: the text is parsed and checked as `chorus run` would (file:line:col
// errors go back to the client), the run is created in the journal, the submission is recorded
// (runtime/store/submission_store.hpp), and only then is the run id returned. A repeated
// (uid, key) returns the run it made before. Restarted after a crash, the instance resumes
// every accepted run that had not ended: what succeeded is not run again (the journal), the
// orphans of the killed instance are killed first (its token).
//
// Users: a task runs as its submitter when the instance runs as root (setpriv); an instance of
// an ordinary user runs everything as that user and accepts its own user's submissions only.
//
// Memory: a run that finished is let go a loop turn later (its graph, what the coordinator and
// the journal keep of its tasks): the instance holds the runs that go on, not every task it ran.
//
// Threading: submit, cancel, owner_of, runs and stop may be called from any one thread besides the
// coordinator's own, which the instance starts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/serve_access.hpp"
#include "core/status.hpp"
#include "runtime/store/state_store.hpp"

namespace chorus {

class ExecutionBackend;

struct ServedInstanceOptions {
  std::string state_dir;       // absolute
  std::string queue = "uwfq";  // every run's tasks together
  std::string placement = "first-fit";
  ExecutionBackend* backend = nullptr;  // started; null = this machine
  int cores = 0;  // with no backend: the cores of this machine handed out (0 = all)
  // Admins, weights (the queue's `weights` option) and per-user limits: queued_tasks refuses a
  // submission, running_cores holds tasks back (schedulers/queue/user_cap_queue.hpp).
  ServeAccess access;
};

struct Submitter {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string name;  // login name (from the password database)
  std::string home;
};

// The password database's entry of `uid` (name, primary group, home); the uid itself as the
// name when it has none.
Submitter submitter_of(std::uint32_t uid);

struct SubmitRequest {
  Submitter who;
  std::string key;            // client-chosen; empty = a fresh one
  std::string workflow_path;  // absolute, as the client sees it (messages, the run's record)
  std::string workflow_text;
  std::string cwd;  // the client's working directory
};

struct Accepted {
  std::string run_id;
  bool again = false;  // the key had been accepted before: this is that run
};

class ServedInstance {
 public:
  // Opens the stores, resumes the accepted runs that had not ended, starts the coordinator.
  // Errors: io_error (the state folder, the stores), invalid_argument (policies).
  static Result<std::unique_ptr<ServedInstance>> start(const ServedInstanceOptions& options);
  ~ServedInstance();  // stop()s

  // Errors: invalid_argument (the workflow, with file:line:col; what served runs cannot hold),
  // io_error (the stores), cancelled (the instance is stopping).
  Result<Accepted> submit(const SubmitRequest& request);
  // Asks the run's tasks to stop; the run ends cancelled. Errors: not_found.
  Status cancel(const std::string& run_id);
  // Who submitted a run of this instance (nullopt: not one of its runs).
  std::optional<std::uint32_t> owner_of(const std::string& run_id) const;
  // The instance's runs, oldest first, with their owners.
  std::vector<std::pair<std::string, std::uint32_t>> runs() const;
  // Stops the coordinator: what runs is stopped and the runs stay resumable (they are not
  // ended). Idempotent.
  void stop();
  // The instance's token: every task carries it as CHORUS_RUN_TOKEN.
  const std::string& token() const;
  // Tasks of the user's runs that have not ended.
  std::int64_t outstanding_tasks(std::uint32_t uid) const;
  const ServeAccess& access() const;

  class Impl;

 private:
  explicit ServedInstance(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
