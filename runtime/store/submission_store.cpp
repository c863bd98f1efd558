#include "runtime/store/submission_store.hpp"

#include <sqlite3.h>

namespace chorus {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS submissions(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  uid INTEGER NOT NULL,
  user TEXT NOT NULL,
  key TEXT NOT NULL,
  run_id TEXT NOT NULL,
  workflow_path TEXT NOT NULL,
  workflow_text TEXT NOT NULL,
  cwd TEXT NOT NULL,
  created REAL NOT NULL,
  UNIQUE(uid, key));
CREATE INDEX IF NOT EXISTS submissions_by_run ON submissions(run_id);
)sql";

struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

std::string column(sqlite3_stmt* stmt, int i) {
  const auto* text = sqlite3_column_text(stmt, i);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

Submission row(sqlite3_stmt* stmt) {
  Submission s;
  s.uid = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 0));
  s.user = column(stmt, 1);
  s.key = column(stmt, 2);
  s.run_id = column(stmt, 3);
  s.workflow_path = column(stmt, 4);
  s.workflow_text = column(stmt, 5);
  s.cwd = column(stmt, 6);
  s.created = sqlite3_column_double(stmt, 7);
  return s;
}

constexpr const char* kColumns =
    "SELECT uid, user, key, run_id, workflow_path, workflow_text, cwd, created FROM submissions";

}  // namespace

Status SubmissionStore::failure(const std::string& what) const {
  return io_error(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

Result<std::unique_ptr<SubmissionStore>> SubmissionStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return io_error("cannot open " + path + ": " + why);
  }
  std::unique_ptr<SubmissionStore> store(new SubmissionStore(db, path));
  sqlite3_busy_timeout(db, 10000);
  if (sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", nullptr, nullptr,
                   nullptr) != SQLITE_OK ||
      sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return store->failure("cannot set up the submissions table");
  }
  return store;
}

SubmissionStore::~SubmissionStore() {
  sqlite3_close(db_);
}

Result<std::optional<Submission>> SubmissionStore::find(std::uint32_t uid, const std::string& key) {
  Statement q;
  const std::string sql = std::string(kColumns) + " WHERE uid = ?1 AND key = ?2";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.stmt, nullptr) != SQLITE_OK) {
    return failure("cannot read submissions");
  }
  sqlite3_bind_int64(q.stmt, 1, uid);
  sqlite3_bind_text(q.stmt, 2, key.c_str(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(q.stmt);
  if (rc == SQLITE_ROW) return std::optional<Submission>(row(q.stmt));
  if (rc == SQLITE_DONE) return std::optional<Submission>();
  return failure("cannot read submissions");
}

Status SubmissionStore::add(const Submission& s) {
  Statement q;
  const char* sql =
      "INSERT INTO submissions(uid, user, key, run_id, workflow_path, workflow_text, cwd, "
      "created) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  if (sqlite3_prepare_v2(db_, sql, -1, &q.stmt, nullptr) != SQLITE_OK) {
    return failure("cannot record a submission");
  }
  sqlite3_bind_int64(q.stmt, 1, s.uid);
  int i = 2;
  for (const std::string* text :
       {&s.user, &s.key, &s.run_id, &s.workflow_path, &s.workflow_text, &s.cwd}) {
    sqlite3_bind_text(q.stmt, i++, text->c_str(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
  }
  sqlite3_bind_double(q.stmt, 8, s.created);
  const int rc = sqlite3_step(q.stmt);
  if (rc == SQLITE_DONE) return {};
  if (rc == SQLITE_CONSTRAINT) {
    return Status(ErrorCode::unavailable, "submission key '" + s.key + "' is already taken");
  }
  return failure("cannot record a submission");
}

Result<std::optional<Submission>> SubmissionStore::find_by_run(const std::string& run_id) {
  Statement q;
  const std::string sql = std::string(kColumns) + " WHERE run_id = ?1";
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.stmt, nullptr) != SQLITE_OK) {
    return failure("cannot read submissions");
  }
  sqlite3_bind_text(q.stmt, 1, run_id.c_str(), static_cast<int>(run_id.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(q.stmt);
  if (rc == SQLITE_ROW) return std::optional<Submission>(row(q.stmt));
  if (rc == SQLITE_DONE) return std::optional<Submission>();
  return failure("cannot read submissions");
}

Result<std::optional<std::uint32_t>> SubmissionStore::owner_of(const std::string& run_id) {
  Statement q;
  if (sqlite3_prepare_v2(db_, "SELECT uid FROM submissions WHERE run_id = ?1", -1, &q.stmt,
                         nullptr) != SQLITE_OK) {
    return failure("cannot read submissions");
  }
  sqlite3_bind_text(q.stmt, 1, run_id.c_str(), static_cast<int>(run_id.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(q.stmt);
  if (rc == SQLITE_ROW) {
    return std::optional<std::uint32_t>(
        static_cast<std::uint32_t>(sqlite3_column_int64(q.stmt, 0)));
  }
  if (rc == SQLITE_DONE) return std::optional<std::uint32_t>();
  return failure("cannot read submissions");
}

Result<std::vector<std::pair<std::string, std::uint32_t>>> SubmissionStore::owners() {
  Statement q;
  if (sqlite3_prepare_v2(db_, "SELECT run_id, uid FROM submissions ORDER BY seq", -1, &q.stmt,
                         nullptr) != SQLITE_OK) {
    return failure("cannot read submissions");
  }
  std::vector<std::pair<std::string, std::uint32_t>> out;
  int rc;
  while ((rc = sqlite3_step(q.stmt)) == SQLITE_ROW) {
    out.emplace_back(column(q.stmt, 0),
                     static_cast<std::uint32_t>(sqlite3_column_int64(q.stmt, 1)));
  }
  if (rc != SQLITE_DONE) return failure("cannot read submissions");
  return out;
}

}  // namespace chorus
