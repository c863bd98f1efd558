// SubmissionStore: what a served instance (`chorus serve`) accepted, in <state>/serve.db beside
// the journal: per submission its owner, its client-chosen key, the run it became and the
// workflow text, so a restarted server resumes every accepted run and a client that retries a
// submission (same key) gets the run it already has, not a second one.
//
// Order of acceptance (api/served_instance.cpp): the run is created in the journal, then the
// submission is recorded here, then the client hears the run id. A run without a submission row
// was never acknowledged: a restart ends it as not accepted.
//
// Durability as SqliteStore (WAL, synchronous=NORMAL). Threading: one object per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"

struct sqlite3;

namespace chorus {

struct Submission {
  std::uint32_t uid = 0;
  std::string user;  // login name at acceptance
  std::string key;   // client-chosen, unique per uid
  std::string run_id;
  std::string workflow_path;  // as the client named it (messages)
  std::string workflow_text;
  std::string cwd;  // the client's working directory: relative paths resolve against it
  double created = 0;
};

class SubmissionStore {
 public:
  // Errors: io_error naming the file.
  static Result<std::unique_ptr<SubmissionStore>> open(const std::string& path);
  ~SubmissionStore();
  SubmissionStore(const SubmissionStore&) = delete;
  SubmissionStore& operator=(const SubmissionStore&) = delete;

  // The submission of `uid` with `key`, if any.
  Result<std::optional<Submission>> find(std::uint32_t uid, const std::string& key);
  // Records it. Errors: unavailable when (uid, key) is taken (a racing retry), io_error.
  Status add(const Submission& s);
  // The submission that became the run, if any. Indexed by run id.
  Result<std::optional<Submission>> find_by_run(const std::string& run_id);
  // Who submitted the run (nullopt: no submission became it). Indexed by run id.
  Result<std::optional<std::uint32_t>> owner_of(const std::string& run_id);
  // Every run with its submitter, oldest first (what `chorus list` filters).
  Result<std::vector<std::pair<std::string, std::uint32_t>>> owners();

 private:
  explicit SubmissionStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status failure(const std::string& what) const;
  sqlite3* db_;
  std::string path_;
};

}  // namespace chorus
