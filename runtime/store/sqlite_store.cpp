#include "runtime/store/sqlite_store.hpp"

#include <sqlite3.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace chorus {
namespace {

// 'CHRS': marks the file as ours in the SQLite header, so another application's database is
// recognised before we touch its tables.
constexpr std::int32_t kApplicationId = 0x43485253;
constexpr int kSchemaVersion = 4;
constexpr int kBusyTimeoutMs = 10'000;
constexpr std::size_t kListedRuns = 10;
constexpr int kSeqBits = 40;  // up to 2^40 - 1 events per run
constexpr std::int64_t kSeqMask = (std::int64_t{1} << kSeqBits) - 1;
constexpr std::int64_t kMaxRunKey = (std::int64_t{1} << (63 - kSeqBits)) - 1;
// Rows per multi-row INSERT: one statement execution per 32 events instead of per event cuts the
// per-statement set-up cost of an append; 32 x 13 parameters stays far below SQLite's limit.
constexpr int kRowsPerInsert = 32;
constexpr int kEventColumns = 13;

constexpr const char* kInsertEvents =
    "INSERT INTO events(seq, run, task, name, attempt, state, time, exit_code, fingerprint, "
    "detail, kind, cores, node) VALUES";

// Schema v3 (v1 lacked runs.nodes and events.kind/cores/node, see kMigrateV1; v2 lacked the run's
// token and coordinator identity and task_groups, see kMigrateV2). `runs.key` is the
// integer that events reference (cheaper than repeating the text id in every event row). `stem`/`n`
// make "highest n for this name" one index probe.
//
// events.seq, the rowid, is (run key << kSeqBits) | n with n = 1, 2, ... within the run: the events
// of one run are one contiguous rowid range, so replay is a range scan that never visits another
// run's rows and appends need no secondary index. Measured with bench_journal (batches of 1,000,
// CPU per batch): an index on events(run) 1.2 ms, a WITHOUT ROWID table keyed (run, seq) 1.05 ms,
// this layout 0.76 ms, and 0.54 ms with 32-row INSERTs.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs(
  id              TEXT PRIMARY KEY,
  key             INTEGER NOT NULL UNIQUE,
  stem            TEXT NOT NULL,
  n               INTEGER NOT NULL,
  workflow_name   TEXT NOT NULL,
  workflow_path   TEXT NOT NULL,
  workdir         TEXT NOT NULL,
  status          TEXT NOT NULL,
  created         REAL NOT NULL,
  updated         REAL NOT NULL,
  total_tasks     INTEGER NOT NULL,
  coordinator_pid INTEGER NOT NULL,
  host            TEXT NOT NULL,
  nodes           TEXT NOT NULL DEFAULT '',
  coordinator_start INTEGER NOT NULL DEFAULT 0,
  boot_id         TEXT NOT NULL DEFAULT '',
  token           TEXT NOT NULL DEFAULT '',
  UNIQUE(stem, n)
);
CREATE INDEX IF NOT EXISTS runs_by_path ON runs(workflow_path, created);
CREATE TABLE IF NOT EXISTS events(
  seq         INTEGER PRIMARY KEY,
  run         INTEGER NOT NULL,
  task        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  state       TEXT NOT NULL,
  time        REAL NOT NULL,
  exit_code   INTEGER NOT NULL,
  fingerprint INTEGER NOT NULL,
  detail      TEXT,
  kind        INTEGER,
  cores       INTEGER,
  node        TEXT
);
)sql";

// The process groups of attempts in flight (see runtime/README.md, "orphans"): part of schema v3
// and of the v2 -> v3 migration.
constexpr const char* kTaskGroupsTable = R"sql(
CREATE TABLE IF NOT EXISTS task_groups(
  run         INTEGER NOT NULL,
  task        INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  pgid        INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,
  PRIMARY KEY(run, task, attempt)
) WITHOUT ROWID;
)sql";

// v1 -> v2. ADD COLUMN rewrites no rows, so migrating a large journal is instant. Old events have
// NULL kind, cores and node, read back as executable, 1 core, no node (what v1's coordinator gave
// a task that asked for nothing else).
constexpr const char* kMigrateV1 = R"sql(
ALTER TABLE runs ADD COLUMN nodes TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN kind INTEGER;
ALTER TABLE events ADD COLUMN cores INTEGER;
ALTER TABLE events ADD COLUMN node TEXT;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

// v2 -> v3: runs journaled before it have no token and an unverifiable coordinator (start 0, no
// boot id); see api/run_workflow.cpp for how those are treated.
constexpr const char* kMigrateV2 = R"sql(
ALTER TABLE runs ADD COLUMN coordinator_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN token TEXT NOT NULL DEFAULT '';
UPDATE meta SET value = '3' WHERE key = 'schema_version';
)sql";

// v3 -> v4 and part of v4: the placement records of policies that explain their decisions
// (PlacementRecord). One row per attempt; its candidates in one BLOB (encode_candidates below):
// nine candidates with 21 features each are one row of about 700 bytes instead of nine rows.
constexpr const char* kPlacementsTable = R"sql(
CREATE TABLE IF NOT EXISTS placements(
  run        INTEGER NOT NULL,
  task       INTEGER NOT NULL,
  attempt    INTEGER NOT NULL,
  name       TEXT NOT NULL,
  policy     TEXT NOT NULL,
  basis      TEXT NOT NULL,
  candidates BLOB NOT NULL,
  PRIMARY KEY(run, task, attempt)
) WITHOUT ROWID;
)sql";
constexpr const char* kMigrateV3 = "UPDATE meta SET value = '4' WHERE key = 'schema_version';";

constexpr const char* kRunColumns =
    "id, workflow_name, workflow_path, workdir, status, created, updated, total_tasks, "
    "coordinator_pid, host, key, nodes, coordinator_start, boot_id, token";

// events.kind holds these codes, not the names, and the v2 columns are nullable without defaults:
// with bench_journal (1,000-event appends, CPU) v1 took 0.57 ms, v2 with a TEXT kind and NOT NULL
// DEFAULT columns 0.66-0.69 ms, this layout 0.62 ms. The codes are part of the file format: never
// renumber them.
constexpr std::int64_t kind_code(TaskKind kind) {
  switch (kind) {
    case TaskKind::executable:
      return 0;
    case TaskKind::mpi:
      return 1;
    case TaskKind::function:
      return 2;
    case TaskKind::service:
      return 3;
  }
  return 0;
}

std::optional<TaskKind> kind_from_code(std::int64_t code) {
  for (TaskKind k : {TaskKind::executable, TaskKind::mpi, TaskKind::function, TaskKind::service}) {
    if (kind_code(k) == code) return k;
  }
  return std::nullopt;
}

// runs.nodes: one line per node, "<cores> <memory_mb> <gpus> <name>", a backslash and a newline in
// the name escaped as two characters each. Compact, and read without a JSON library.
std::string encode_nodes(const std::vector<NodeInfo>& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    out += std::to_string(n.capacity.cores) + ' ' + std::to_string(n.capacity.memory_mb) + ' ' +
           std::to_string(n.capacity.gpus) + ' ';
    for (char c : n.name) {
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out.push_back(c);
      }
    }
    out.push_back('\n');
  }
  return out;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

std::optional<std::vector<NodeInfo>> decode_nodes(std::string_view text) {
  std::vector<NodeInfo> out;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    if (eol == std::string_view::npos) return std::nullopt;
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 1);
    std::int64_t fields[3] = {};
    for (auto& f : fields) {
      const auto sp = line.find(' ');
      if (sp == std::string_view::npos) return std::nullopt;
      const auto v = parse_int(line.substr(0, sp));
      if (!v) return std::nullopt;
      f = *v;
      line.remove_prefix(sp + 1);
    }
    NodeInfo& n = out.emplace_back();
    n.capacity.cores = static_cast<int>(fields[0]);
    n.capacity.memory_mb = fields[1];
    n.capacity.gpus = static_cast<int>(fields[2]);
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        ++i;
        n.name.push_back(line[i] == 'n' ? '\n' : line[i]);
      } else {
        n.name.push_back(line[i]);
      }
    }
  }
  return out;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string column_string(sqlite3_stmt* stmt, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, col)));
}

std::string_view column_view(sqlite3_stmt* stmt, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  if (text == nullptr) return {};
  return {text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, col))};
}

// Binds text that must outlive the next step (SQLITE_STATIC). An empty view may have a null data()
// pointer, which SQLite would store as NULL.
void bind_text(sqlite3_stmt* stmt, int col, std::string_view text) {
  sqlite3_bind_text(stmt, col, text.empty() ? "" : text.data(), static_cast<int>(text.size()),
                    SQLITE_STATIC);
}

// The run's columns from workflow_name to token, in the order both the INSERT and the UPDATE of
// `runs` number them, starting at parameter `first`. `nodes` is encode_nodes(info.nodes) (kept
// alive by the caller until the statement runs).
void bind_run_fields(sqlite3_stmt* stmt, int first, const RunInfo& info, const std::string& nodes) {
  bind_text(stmt, first, info.workflow_name);
  bind_text(stmt, first + 1, info.workflow_path);
  bind_text(stmt, first + 2, info.workdir);
  sqlite3_bind_text(stmt, first + 3, to_string(info.status), -1, SQLITE_STATIC);
  sqlite3_bind_double(stmt, first + 4, info.created);
  sqlite3_bind_double(stmt, first + 5, info.updated);
  sqlite3_bind_int64(stmt, first + 6, info.total_tasks);
  sqlite3_bind_int64(stmt, first + 7, info.coordinator_pid);
  bind_text(stmt, first + 8, info.host);
  bind_text(stmt, first + 9, nodes);
  sqlite3_bind_int64(stmt, first + 10, static_cast<std::int64_t>(info.coordinator_start));
  bind_text(stmt, first + 11, info.boot_id);
  bind_text(stmt, first + 12, info.token);
}

// A placement's candidates as one BLOB, little-endian: a format byte (1), a count byte, then per
// candidate a u16 name length and the name's bytes, the prediction as an f64 (NaN = none), a
// feature count byte and that many f32s. `out` keeps its capacity from one call to the next.
static_assert(std::endian::native == std::endian::little, "the BLOB layout is little-endian");
void encode_candidates(std::span<const PlacementCandidate> candidates, std::string& out) {
  out.clear();
  const std::size_t count = std::min<std::size_t>(candidates.size(), 255);
  out.push_back('\x01');
  out.push_back(static_cast<char>(count));
  auto put = [&out](const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); };
  for (std::size_t i = 0; i < count; ++i) {
    const PlacementCandidate& c = candidates[i];
    const auto len = static_cast<std::uint16_t>(std::min<std::size_t>(c.node.size(), 65535));
    put(&len, sizeof len);
    put(c.node.data(), len);
    put(&c.predicted_s, sizeof c.predicted_s);
    const auto n = static_cast<std::uint8_t>(std::min<std::size_t>(c.features.size(), 255));
    put(&n, 1);
    put(c.features.data(), n * sizeof(float));
  }
}

bool decode_candidates(std::string_view in, std::vector<PlacementRow::Candidate>& out) {
  std::size_t pos = 0;
  auto get = [&](void* p, std::size_t n) {
    if (in.size() - pos < n) return false;
    if (n == 0) return true;  // p may be an empty vector's null data(): memcpy must not see it
    std::memcpy(p, in.data() + pos, n);
    pos += n;
    return true;
  };
  std::uint8_t format = 0, count = 0;
  if (!get(&format, 1) || format != 1 || !get(&count, 1)) return false;
  out.resize(count);
  for (auto& c : out) {
    std::uint16_t len = 0;
    if (!get(&len, sizeof len) || in.size() - pos < len) return false;
    c.node.assign(in.data() + pos, len);
    pos += len;
    std::uint8_t n = 0;
    if (!get(&c.predicted_s, sizeof c.predicted_s) || !get(&n, 1)) return false;
    c.features.resize(n);
    if (!get(c.features.data(), n * sizeof(float))) return false;
  }
  return pos == in.size();
}

// Resets a statement when the scope ends, so a half-read SELECT never holds a read transaction
// open (which would pin the WAL and stall checkpoints).
class ResetGuard {
 public:
  explicit ResetGuard(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~ResetGuard() { sqlite3_reset(stmt_); }
  ResetGuard(const ResetGuard&) = delete;
  ResetGuard& operator=(const ResetGuard&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

// The part of an id before "-<n>": the workflow name restricted to [A-Za-z0-9_.-], other
// characters replaced by '_', separators trimmed at both ends; "run" when nothing is left.
std::string id_stem(std::string_view workflow_name) {
  std::string stem;
  stem.reserve(workflow_name.size());
  for (char c : workflow_name) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
    // A multi-byte UTF-8 character becomes a single '_'.
    if (keep) {
      stem.push_back(c);
    } else if (stem.empty() || stem.back() != '_') {
      stem.push_back('_');
    }
  }
  auto is_sep = [](char c) { return c == '_' || c == '.' || c == '-'; };
  while (!stem.empty() && is_sep(stem.back())) stem.pop_back();
  std::size_t first = 0;
  while (first < stem.size() && is_sep(stem[first])) ++first;
  stem.erase(0, first);
  return stem.empty() ? std::string("run") : stem;
}

std::optional<std::int64_t> parse_run_number(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string join_ids(const std::vector<RunInfo>& runs) {
  std::string out;
  for (const auto& r : runs) {
    if (!out.empty()) out += ", ";
    out += r.id;
  }
  return out;
}

const char* primary_code_name(int primary) {
  switch (primary) {
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    default:
      return "SQLITE_ERROR";
  }
}

// The words a user can act on when the last failure on `db` is a full disk or a place we may not
// write ("disk I/O error" and "unable to open database file" say neither); nullopt otherwise.
// SQLite reports the same condition under several codes depending on which file (journal, -wal,
// -shm) and which call met it, so the OS's errno decides where it is known.
std::optional<std::string> storage_problem(sqlite3* db, const std::string& path) {
  if (db == nullptr) return std::nullopt;
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  const bool os_level = primary == SQLITE_FULL || primary == SQLITE_IOERR ||
                        primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY ||
                        primary == SQLITE_PERM;
  if (!os_level) return std::nullopt;
  const int sys = sqlite3_system_errno(db);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const std::string code = primary_code_name(primary);
  const std::string head = "cannot write the journal " + path + ": ";
  if (primary == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT) {
    return head + (sys == EDQUOT ? "the disk quota is exhausted" : "the disk is full") + " (" +
           code + "); free space on the file system of " + dir +
           " and try again (a run it stopped continues with chorus run --resume)";
  }
  if (sys == EROFS || (primary == SQLITE_READONLY && sys != EACCES && sys != EPERM)) {
    return head + "the state folder " + dir + " is read-only (" + code +
           "); use a writable one (--state DIR)";
  }
  if (sys == EACCES || sys == EPERM) {
    return head + "permission denied in the state folder " + dir + " (" + code +
           "); it and the journal's files must be writable by this user";
  }
  return std::nullopt;
}

Status not_a_journal(const std::string& path, std::string_view why) {
  return io_error(path + " is not a Chorus journal (" + std::string(why) + ")");
}

// Runs a one-row PRAGMA or query on a connection that is not yet a SqliteStore. Returns the first
// column of the first row as text (empty when there is no row).
Result<std::string> query_text(sqlite3* db, const char* sql, int* error_code) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  std::string out;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(raw);
    if (rc == SQLITE_ROW) {
      out = column_string(raw, 0);
      rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
      rc = SQLITE_OK;
    }
  }
  std::string message = rc == SQLITE_OK ? std::string() : sqlite3_errmsg(db);
  sqlite3_finalize(raw);
  *error_code = rc;
  if (rc != SQLITE_OK) return internal_error(message);
  return out;
}

// Repeats a PRAGMA that needs a lock (journal_mode) while another process holds it: SQLite does
// not always route those through the busy handler.
Result<std::string> query_text_waiting(sqlite3* db, const char* sql, int* error_code) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    auto r = query_text(db, sql, error_code);
    if (r.ok() || (*error_code & 0xff) != SQLITE_BUSY ||
        std::chrono::steady_clock::now() > deadline) {
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status exec_on(sqlite3* db, const char* sql, int* error_code) {
  char* message = nullptr;
  *error_code = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (*error_code == SQLITE_OK) return {};
  std::string text = message != nullptr ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  return internal_error(text);
}

// Upgrades an older journal in place, in one write transaction (a no-op when another process
// migrated it since we looked). An older build then refuses the file as newer, which it is.
Status migrate(sqlite3* db, const std::string& path, std::string_view from) {
  int rc = SQLITE_OK;
  auto fail = [&](const Status& s) {
    auto problem = storage_problem(db, path);
    int ignored = 0;
    (void)exec_on(db, "ROLLBACK", &ignored);
    return io_error("cannot upgrade journal " + path + " from schema version " + std::string(from) +
                    ": " + (problem ? *problem : s.message()));
  };
  if (auto s = exec_on(db, "BEGIN IMMEDIATE", &rc); !s.ok()) return fail(s);
  auto version = query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", &rc);
  if (!version.ok()) return fail(version.status());
  if (*version == "1") {
    if (auto s = exec_on(db, kMigrateV1, &rc); !s.ok()) return fail(s);
    *version = "2";
  }
  if (*version == "2") {
    if (auto s = exec_on(db, kMigrateV2, &rc); !s.ok()) return fail(s);
    if (auto s = exec_on(db, kTaskGroupsTable, &rc); !s.ok()) return fail(s);
    *version = "3";
  }
  if (*version == "3") {
    if (auto s = exec_on(db, kPlacementsTable, &rc); !s.ok()) return fail(s);
    if (auto s = exec_on(db, kMigrateV3, &rc); !s.ok()) return fail(s);
  }
  if (auto s = exec_on(db, "COMMIT", &rc); !s.ok()) return fail(s);
  return {};
}

// Checks that `db` is a Chorus journal of a version we read, creating the schema in an empty file
// and upgrading an older one.
Status check_or_create_schema(sqlite3* db, const std::string& path) {
  int rc = SQLITE_OK;
  auto fail = [&](const Status& s) {
    if ((rc & 0xff) == SQLITE_NOTADB) return not_a_journal(path, s.message());
    if (auto problem = storage_problem(db, path)) return io_error(*problem);
    return io_error("cannot open journal " + path + ": " + s.message());
  };
  for (int round = 0; round < 2; ++round) {
    auto app_id = query_text(db, "PRAGMA application_id", &rc);
    if (!app_id.ok()) return fail(app_id.status());
    auto objects = query_text(db, "SELECT count(*) FROM sqlite_schema", &rc);
    if (!objects.ok()) return fail(objects.status());

    if (*app_id == std::to_string(kApplicationId)) {
      auto version = query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'", &rc);
      if (!version.ok() || version->empty()) {
        return not_a_journal(path, "it has no schema version");
      }
      const auto v = parse_run_number(*version);
      if (!v || *v < 1) return not_a_journal(path, "bad schema version '" + *version + "'");
      if (*v > kSchemaVersion) {
        return not_a_journal(path, "schema version " + *version +
                                       " is newer than this build reads (" +
                                       std::to_string(kSchemaVersion) + "); use a newer chorus");
      }
      if (*v == kSchemaVersion) return {};
      if (round == 1) break;
      if (auto s = migrate(db, path, *version); !s.ok()) return s;
      continue;  // read the version back
    }
    if (*app_id != "0" || *objects != "0") {
      return not_a_journal(path, "an SQLite database of another application");
    }
    if (round == 1) break;

    // Empty file: create the schema unless another process did so since we looked.
    if (auto s = exec_on(db, "BEGIN IMMEDIATE", &rc); !s.ok()) return fail(s);
    auto again = query_text(db, "SELECT count(*) FROM sqlite_schema", &rc);
    if (!again.ok()) {
      Status s = fail(again.status());
      int ignored = 0;
      (void)exec_on(db, "ROLLBACK", &ignored);
      return s;
    }
    if (*again == "0") {
      const std::string setup = std::string(kSchema) + kTaskGroupsTable + kPlacementsTable +
                                "INSERT INTO meta(key, value) VALUES('schema_version', '" +
                                std::to_string(kSchemaVersion) + "');" +
                                "PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
      if (auto s = exec_on(db, setup.c_str(), &rc); !s.ok()) {
        int ignored = 0;
        (void)exec_on(db, "ROLLBACK", &ignored);
        return fail(s);
      }
    }
    if (auto s = exec_on(db, "COMMIT", &rc); !s.ok()) {
      int ignored = 0;
      (void)exec_on(db, "ROLLBACK", &ignored);
      return fail(s);
    }
  }
  return not_a_journal(path, "its schema could not be read back");
}

}  // namespace

void SqliteStore::StmtDeleter::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

SqliteStore::SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

SqliteStore::~SqliteStore() {
  // Statements must be finalized before the connection closes.
  begin_.reset();
  commit_.reset();
  rollback_.reset();
  insert_event_.reset();
  select_run_key_.reset();
  select_run_by_id_.reset();
  select_runs_.reset();
  select_latest_.reset();
  select_latest_of_.reset();
  select_by_number_.reset();
  select_by_prefix_.reset();
  select_next_n_.reset();
  insert_run_.reset();
  update_run_.reset();
  select_events_.reset();
  select_last_seq_.reset();
  insert_events_.reset();
  insert_group_.reset();
  select_groups_.reset();
  delete_groups_.reset();
  insert_placement_.reset();
  select_placements_.reset();
  sqlite3_close_v2(db_);
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return io_error("cannot open journal: the path is empty");
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    return io_error("cannot open journal " + path + ": directory " + parent.string() +
                    " does not exist");
  }

  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (db != nullptr && sqlite3_system_errno(db) != 0) {
      message += std::string(" (") + std::strerror(sqlite3_system_errno(db)) + ")";
    }
    auto problem = storage_problem(db, path);
    sqlite3_close(db);
    return io_error(problem ? *problem : "cannot open journal " + path + ": " + message);
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db, path));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // Closing the last connection would checkpoint the WAL into the database and delete it (an
  // fsync and an unlink, ~15 ms at the end of every command). The WAL is durable as it is and the
  // next writer's automatic checkpoints fold it in, so closing leaves it.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);

  // Reading the header first tells a foreign file apart before any PRAGMA tries to change it.
  auto app_id = query_text(db, "PRAGMA application_id", &rc);
  if (!app_id.ok()) {
    if ((rc & 0xff) == SQLITE_NOTADB) return not_a_journal(path, app_id.status().message());
    if (auto problem = storage_problem(db, path)) return io_error(*problem);
    return io_error("cannot open journal " + path + ": " + app_id.status().message());
  }
  if (*app_id != "0" && *app_id != std::to_string(kApplicationId)) {
    return not_a_journal(path, "an SQLite database of another application");
  }
  auto mode = query_text_waiting(db, "PRAGMA journal_mode = WAL", &rc);
  if (!mode.ok()) {
    if (auto problem = storage_problem(db, path)) return io_error(*problem);
    return io_error("cannot open journal " + path +
                    ": switching to WAL mode failed: " + mode.status().message());
  }
  if (auto s = store->exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF"); !s.ok()) {
    return s;
  }
  if (auto s = check_or_create_schema(db, path); !s.ok()) return s;
  if (auto s = store->prepare_all(); !s.ok()) return s;
  return store;
}

Status SqliteStore::error(std::string_view what) const {
  if (auto problem = storage_problem(db_, path_)) {
    return io_error(*problem + " (while " + std::string(what) + ")");
  }
  return io_error(std::string(what) + ": " + sqlite3_errmsg(db_) + " (journal " + path_ + ")");
}

Status SqliteStore::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string text = message != nullptr ? message : sqlite3_errmsg(db_);
  sqlite3_free(message);
  if (auto problem = storage_problem(db_, path_)) return io_error(*problem);
  return io_error(std::string("journal ") + path_ + ": " + text);
}

namespace {

std::string insert_rows(int rows) {
  std::string sql = kInsertEvents;
  for (int r = 0; r < rows; ++r) {
    sql += r == 0 ? "(" : ",(";
    for (int c = 0; c < kEventColumns; ++c) sql += c == 0 ? "?" : ",?";
    sql += ")";
  }
  return sql;
}

// Binds one event as the row whose first parameter is `first` (1-based).
void bind_event(sqlite3_stmt* stmt, int first, std::int64_t seq, std::int64_t run,
                const TaskEvent& e) {
  sqlite3_bind_int64(stmt, first, seq);
  sqlite3_bind_int64(stmt, first + 1, run);
  sqlite3_bind_int64(stmt, first + 2, e.task);
  bind_text(stmt, first + 3, e.name);
  sqlite3_bind_int64(stmt, first + 4, e.attempt);
  sqlite3_bind_text(stmt, first + 5, to_string(e.state), -1, SQLITE_STATIC);
  sqlite3_bind_double(stmt, first + 6, e.time);
  sqlite3_bind_int(stmt, first + 7, e.exit_code);
  sqlite3_bind_int64(stmt, first + 8, std::bit_cast<std::int64_t>(e.fingerprint));
  if (e.detail.empty()) {
    sqlite3_bind_null(stmt, first + 9);
  } else {
    bind_text(stmt, first + 9, e.detail);
  }
  sqlite3_bind_int64(stmt, first + 10, kind_code(e.kind));
  sqlite3_bind_int(stmt, first + 11, e.cores);
  if (e.node.empty()) {
    sqlite3_bind_null(stmt, first + 12);
  } else {
    bind_text(stmt, first + 12, e.node);
  }
}

}  // namespace

Status SqliteStore::prepare_all() {
  const std::string runs = kRunColumns;
  const std::pair<Stmt*, std::string> statements[] = {
      {&begin_, "BEGIN IMMEDIATE"},
      {&commit_, "COMMIT"},
      {&rollback_, "ROLLBACK"},
      {&insert_event_, insert_rows(1)},
      {&insert_events_, insert_rows(kRowsPerInsert)},
      {&select_last_seq_, "SELECT max(seq) FROM events WHERE seq BETWEEN ?1 AND ?2"},
      {&select_run_key_, "SELECT key FROM runs WHERE id = ?1"},
      {&select_run_by_id_, "SELECT " + runs + " FROM runs WHERE id = ?1"},
      {&select_runs_, "SELECT " + runs + " FROM runs ORDER BY created, key"},
      {&select_latest_, "SELECT " + runs + " FROM runs ORDER BY created DESC, key DESC LIMIT 1"},
      {&select_latest_of_, "SELECT " + runs +
                               " FROM runs WHERE workflow_path = ?1"
                               " ORDER BY created DESC, key DESC LIMIT 1"},
      {&select_by_number_, "SELECT " + runs + " FROM runs WHERE n = ?1 ORDER BY key"},
      {&select_by_prefix_,
       "SELECT " + runs + " FROM runs WHERE substr(id, 1, length(?1)) = ?1 ORDER BY key"},
      {&select_next_n_,
       "SELECT (SELECT coalesce(max(n), 0) + 1 FROM runs WHERE stem = ?1),"
       " (SELECT coalesce(max(key), 0) + 1 FROM runs)"},
      {&insert_run_,
       "INSERT INTO runs(id, key, stem, n, workflow_name, workflow_path, workdir, status, created,"
       " updated, total_tasks, coordinator_pid, host, nodes, coordinator_start, boot_id, token)"
       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"},
      {&update_run_,
       "UPDATE runs SET workflow_name = ?2, workflow_path = ?3, workdir = ?4, status = ?5,"
       " created = ?6, updated = ?7, total_tasks = ?8, coordinator_pid = ?9, host = ?10,"
       " nodes = ?11, coordinator_start = ?12, boot_id = ?13, token = ?14 WHERE id = ?1"},
      {&insert_group_,
       "INSERT OR REPLACE INTO task_groups(run, task, attempt, pgid, start_ticks)"
       " VALUES(?1, ?2, ?3, ?4, ?5)"},
      {&select_groups_, "SELECT task, attempt, pgid, start_ticks FROM task_groups WHERE run = ?1"},
      {&delete_groups_, "DELETE FROM task_groups WHERE run = ?1"},
      {&insert_placement_,
       "INSERT OR REPLACE INTO placements(run, task, attempt, name, policy, basis, candidates)"
       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
      {&select_placements_,
       "SELECT task, attempt, name, policy, basis, candidates FROM placements WHERE run = ?1"
       " ORDER BY task, attempt"},
      {&select_events_,
       "SELECT task, name, attempt, state, time, exit_code, fingerprint, detail, seq, kind,"
       " cores, node FROM events WHERE seq BETWEEN ?1 AND ?2 ORDER BY seq"},
  };
  for (const auto& [slot, sql] : statements) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                           SQLITE_PREPARE_PERSISTENT, &raw, nullptr) != SQLITE_OK) {
      return error("preparing '" + sql + "'");
    }
    slot->reset(raw);
  }
  return {};
}

Status SqliteStore::step_done(sqlite3_stmt* stmt, std::string_view what) {
  const int rc = sqlite3_step(stmt);
  Status s = rc == SQLITE_DONE ? Status{} : error(what);
  sqlite3_reset(stmt);
  return s;
}

void SqliteStore::rollback() {
  // Nothing to do when SQLite already rolled the transaction back itself (e.g. on SQLITE_FULL).
  if (sqlite3_get_autocommit(db_) != 0) return;
  sqlite3_step(rollback_.get());
  sqlite3_reset(rollback_.get());
}

Result<std::vector<RunInfo>> SqliteStore::query_runs(sqlite3_stmt* stmt, std::string_view what) {
  ResetGuard guard(stmt);
  std::vector<RunInfo> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    RunInfo info;
    info.id = column_string(stmt, 0);
    info.workflow_name = column_string(stmt, 1);
    info.workflow_path = column_string(stmt, 2);
    info.workdir = column_string(stmt, 3);
    const auto status = column_view(stmt, 4);
    const auto parsed = parse_run_status(status);
    if (!parsed) {
      return io_error("run '" + info.id + "' in journal " + path_ + " has unknown status '" +
                      std::string(status) + "'");
    }
    info.status = *parsed;
    info.created = sqlite3_column_double(stmt, 5);
    info.updated = sqlite3_column_double(stmt, 6);
    info.total_tasks = sqlite3_column_int64(stmt, 7);
    info.coordinator_pid = sqlite3_column_int64(stmt, 8);
    info.host = column_string(stmt, 9);
    run_keys_.try_emplace(info.id, sqlite3_column_int64(stmt, 10));
    auto nodes = decode_nodes(column_view(stmt, 11));
    if (!nodes) {
      return io_error("run '" + info.id + "' in journal " + path_ + " has a malformed node list");
    }
    info.nodes = std::move(*nodes);
    info.coordinator_start = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 12));
    info.boot_id = column_string(stmt, 13);
    info.token = column_string(stmt, 14);
    out.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return error(what);
  return out;
}

Status SqliteStore::unknown_run(std::string_view id) {
  auto all = query_runs(select_runs_.get(), "listing runs");
  if (!all.ok()) return all.status();
  std::string known;
  if (all->empty()) {
    known = "no runs yet";
  } else if (all->size() <= kListedRuns) {
    known = "runs: " + join_ids(*all);
  } else {
    const std::size_t older = all->size() - kListedRuns;
    std::vector<RunInfo> newest(all->end() - static_cast<std::ptrdiff_t>(kListedRuns), all->end());
    known = "runs: " + std::to_string(older) + " older, " + join_ids(newest);
  }
  return not_found("no run '" + std::string(id) + "' in " + path_ + " (" + known + ")");
}

Result<RunInfo> SqliteStore::run_by_id(std::string_view run_id) {
  bind_text(select_run_by_id_.get(), 1, run_id);
  auto runs = query_runs(select_run_by_id_.get(), "looking up a run");
  if (!runs.ok()) return runs.status();
  if (runs->empty()) return unknown_run(run_id);
  return std::move(runs->front());
}

Result<std::int64_t> SqliteStore::run_key(std::string_view run_id) {
  if (auto it = run_keys_.find(std::string(run_id)); it != run_keys_.end()) return it->second;
  sqlite3_stmt* stmt = select_run_key_.get();
  ResetGuard guard(stmt);
  bind_text(stmt, 1, run_id);
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return unknown_run(run_id);
  if (rc != SQLITE_ROW) return error("looking up run '" + std::string(run_id) + "'");
  const std::int64_t key = sqlite3_column_int64(stmt, 0);
  run_keys_.emplace(std::string(run_id), key);
  return key;
}

Result<RunInfo> SqliteStore::create_run(RunInfo info) {
  const std::string stem = id_stem(info.workflow_name);
  if (info.created == 0) info.created = wall_now();
  if (info.updated == 0) info.updated = info.created;
  if (info.token.empty()) info.token = new_run_token();
  // BEGIN IMMEDIATE takes the write lock, so two processes cannot pick the same n; the retry covers
  // a writer that held the lock past the busy timeout.
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (auto s = step_done(begin_.get(), "starting a transaction"); !s.ok()) {
      last = s;
      continue;
    }
    std::int64_t n = 0;
    std::int64_t key = 0;
    {
      sqlite3_stmt* stmt = select_next_n_.get();
      ResetGuard guard(stmt);
      bind_text(stmt, 1, stem);
      if (sqlite3_step(stmt) != SQLITE_ROW) {
        last = error("choosing a run id");
        rollback();
        continue;
      }
      n = sqlite3_column_int64(stmt, 0);
      key = sqlite3_column_int64(stmt, 1);
    }
    if (key > kMaxRunKey) {
      rollback();
      return io_error("journal " + path_ + " holds the maximum number of runs (" +
                      std::to_string(kMaxRunKey) + "); start a new journal file");
    }
    info.id = stem + "-" + std::to_string(n);
    sqlite3_stmt* ins = insert_run_.get();
    bind_text(ins, 1, info.id);
    sqlite3_bind_int64(ins, 2, key);
    bind_text(ins, 3, stem);
    sqlite3_bind_int64(ins, 4, n);
    const std::string nodes = encode_nodes(info.nodes);
    bind_run_fields(ins, 5, info, nodes);
    if (auto s = step_done(ins, "registering run '" + info.id + "'"); !s.ok()) {
      last = s;
      rollback();
      continue;
    }
    if (auto s = step_done(commit_.get(), "registering run '" + info.id + "'"); !s.ok()) {
      last = s;
      rollback();
      continue;
    }
    run_keys_[info.id] = key;
    return info;
  }
  return last;
}

Status SqliteStore::update_run(const RunInfo& info) {
  sqlite3_stmt* stmt = update_run_.get();
  bind_text(stmt, 1, info.id);
  const std::string nodes = encode_nodes(info.nodes);
  bind_run_fields(stmt, 2, info, nodes);
  if (auto s = step_done(stmt, "updating run '" + info.id + "'"); !s.ok()) return s;
  if (sqlite3_changes(db_) == 0) return unknown_run(info.id);
  return {};
}

Result<RunInfo> SqliteStore::find_run(std::string_view id) {
  if (id.empty()) return not_found("empty run id (journal " + path_ + ")");
  bind_text(select_run_by_id_.get(), 1, id);
  auto exact = query_runs(select_run_by_id_.get(), "looking up a run");
  if (!exact.ok()) return exact.status();
  if (!exact->empty()) return std::move(exact->front());

  if (id == "latest") {
    auto latest = query_runs(select_latest_.get(), "looking up the latest run");
    if (!latest.ok()) return latest.status();
    if (latest->empty()) return not_found("no runs in " + path_ + " yet");
    return std::move(latest->front());
  }

  std::vector<RunInfo> by_number;
  if (const auto n = parse_run_number(id)) {
    sqlite3_bind_int64(select_by_number_.get(), 1, *n);
    auto found = query_runs(select_by_number_.get(), "looking up a run by number");
    if (!found.ok()) return found.status();
    if (found->size() == 1) return std::move(found->front());
    by_number = std::move(*found);
  }

  bind_text(select_by_prefix_.get(), 1, id);
  auto by_prefix = query_runs(select_by_prefix_.get(), "looking up a run by prefix");
  if (!by_prefix.ok()) return by_prefix.status();
  if (by_prefix->size() == 1) return std::move(by_prefix->front());
  const auto& candidates = by_prefix->size() > 1 ? *by_prefix : by_number;
  if (candidates.size() > 1) {
    return invalid_argument("ambiguous run id '" + std::string(id) + "': " + join_ids(candidates));
  }
  return unknown_run(id);
}

Result<RunInfo> SqliteStore::latest_run_of(std::string_view workflow_path) {
  bind_text(select_latest_of_.get(), 1, workflow_path);
  auto found = query_runs(select_latest_of_.get(), "looking up the latest run of a workflow");
  if (!found.ok()) return found.status();
  if (found->empty()) {
    return not_found("no run of " + std::string(workflow_path) + " in " + path_);
  }
  return std::move(found->front());
}

Result<std::vector<RunInfo>> SqliteStore::list_runs() {
  return query_runs(select_runs_.get(), "listing runs");
}

Status SqliteStore::append(std::string_view run_id, std::span<const TaskEvent> events,
                           std::span<const TaskGroup> groups,
                           std::span<const PlacementRecord> placements) {
  if (events.empty() && groups.empty() && placements.empty()) return {};
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();
  auto failed = [&](sqlite3_stmt* stmt) {
    Status s = error("appending events of run '" + std::string(run_id) + "'");
    sqlite3_reset(stmt);
    rollback();
    return s;
  };

  if (auto s = step_done(begin_.get(), "starting a transaction"); !s.ok()) return s;
  // Read inside the write transaction: no other writer can take the same numbers.
  const std::int64_t first_seq = *key << kSeqBits;
  std::int64_t seq = first_seq;
  {
    sqlite3_stmt* last = select_last_seq_.get();
    ResetGuard guard(last);
    sqlite3_bind_int64(last, 1, first_seq);
    sqlite3_bind_int64(last, 2, first_seq | kSeqMask);
    if (sqlite3_step(last) != SQLITE_ROW) return failed(last);
    if (sqlite3_column_type(last, 0) != SQLITE_NULL) seq = sqlite3_column_int64(last, 0);
  }
  if ((seq & kSeqMask) + static_cast<std::int64_t>(events.size()) > kSeqMask) {
    rollback();
    return io_error("run '" + std::string(run_id) + "' in journal " + path_ +
                    " has reached the maximum number of events");
  }

  std::size_t i = 0;
  sqlite3_stmt* many = insert_events_.get();
  for (; i + kRowsPerInsert <= events.size(); i += kRowsPerInsert) {
    for (int r = 0; r < kRowsPerInsert; ++r) {
      bind_event(many, 1 + r * kEventColumns, ++seq, *key, events[i + r]);
    }
    if (sqlite3_step(many) != SQLITE_DONE) return failed(many);
    sqlite3_reset(many);
  }
  sqlite3_stmt* one = insert_event_.get();
  for (; i < events.size(); ++i) {
    bind_event(one, 1, ++seq, *key, events[i]);
    if (sqlite3_step(one) != SQLITE_DONE) return failed(one);
    sqlite3_reset(one);
  }
  sqlite3_stmt* group = insert_group_.get();
  for (const TaskGroup& g : groups) {
    sqlite3_bind_int64(group, 1, *key);
    sqlite3_bind_int64(group, 2, g.task);
    sqlite3_bind_int64(group, 3, g.attempt);
    sqlite3_bind_int64(group, 4, g.pgid);
    sqlite3_bind_int64(group, 5, static_cast<std::int64_t>(g.start_ticks));
    if (sqlite3_step(group) != SQLITE_DONE) return failed(group);
    sqlite3_reset(group);
  }
  sqlite3_stmt* placement = insert_placement_.get();
  for (const PlacementRecord& p : placements) {
    // The task's name from the attempt's `running` event, which the coordinator journals in the
    // same batch (the events of a batch are few; a linear look is cheaper than an index).
    std::string_view name;
    for (const TaskEvent& e : events) {
      if (e.task == p.task && e.attempt == p.attempt) {
        name = e.name;
        break;
      }
    }
    encode_candidates(p.candidates, candidates_blob_);
    sqlite3_bind_int64(placement, 1, *key);
    sqlite3_bind_int64(placement, 2, p.task);
    sqlite3_bind_int64(placement, 3, p.attempt);
    bind_text(placement, 4, name);
    bind_text(placement, 5, p.policy);
    bind_text(placement, 6, p.basis);
    sqlite3_bind_blob(placement, 7, candidates_blob_.data(),
                      static_cast<int>(candidates_blob_.size()), SQLITE_STATIC);
    if (sqlite3_step(placement) != SQLITE_DONE) return failed(placement);
    sqlite3_reset(placement);
  }
  if (sqlite3_step(commit_.get()) != SQLITE_DONE) return failed(commit_.get());
  sqlite3_reset(commit_.get());
  return {};
}

Result<RunState> SqliteStore::replay(std::string_view run_id) {
  auto info = run_by_id(run_id);
  if (!info.ok()) return info.status();
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();

  RunState state;
  state.info = std::move(*info);
  auto& tasks = state.tasks;
  const auto expected = static_cast<std::size_t>(std::max<std::int64_t>(state.info.total_tasks, 0));
  tasks.reserve(expected);

  // Task ids are dense (0..n-1 in a WorkflowGraph), so a vector maps id -> slot; ids far beyond the
  // run's size fall back to a hash map so a stray id cannot blow up memory.
  constexpr std::uint32_t kNone = ~std::uint32_t{0};
  const std::size_t dense_limit = std::max<std::size_t>(2 * expected, std::size_t{1} << 20);
  std::vector<std::uint32_t> slot_of(expected, kNone);
  std::unordered_map<TaskId, std::uint32_t> sparse;
  std::vector<char> started;
  started.reserve(expected);

  sqlite3_stmt* stmt = select_events_.get();
  ResetGuard guard(stmt);
  sqlite3_bind_int64(stmt, 1, *key << kSeqBits);
  sqlite3_bind_int64(stmt, 2, (*key << kSeqBits) | kSeqMask);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const auto task = static_cast<TaskId>(sqlite3_column_int64(stmt, 0));
    std::uint32_t* slot = nullptr;
    if (task < dense_limit) {
      if (task >= slot_of.size())
        slot_of.resize(std::max<std::size_t>(task + 1, slot_of.size() * 2), kNone);
      slot = &slot_of[task];
    } else {
      slot = &sparse.try_emplace(task, kNone).first->second;
    }
    if (*slot == kNone) {
      *slot = static_cast<std::uint32_t>(tasks.size());
      TaskRecord& fresh = tasks.emplace_back();
      fresh.task = task;
      fresh.name = column_string(stmt, 1);
      started.push_back(0);
    }
    TaskRecord& rec = tasks[*slot];
    const auto state_text = column_view(stmt, 3);
    const auto parsed = parse_task_state(state_text);
    if (!parsed) {
      return io_error("event " + std::to_string(sqlite3_column_int64(stmt, 8) & kSeqMask) +
                      " of run '" + std::string(run_id) + "' in journal " + path_ +
                      " has unknown state '" + std::string(state_text) + "'");
    }
    const double time = sqlite3_column_double(stmt, 4);
    rec.state = *parsed;
    rec.attempt = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 2));
    rec.exit_code = sqlite3_column_int(stmt, 5);
    rec.fingerprint = std::bit_cast<std::uint64_t>(sqlite3_column_int64(stmt, 6));
    if (sqlite3_column_type(stmt, 7) == SQLITE_NULL) {
      rec.detail.clear();
    } else {
      rec.detail.assign(column_view(stmt, 7));
    }
    if (rec.state == TaskState::running) {
      if (started[*slot] == 0) {
        rec.first_start = time;
        started[*slot] = 1;
      }
      rec.last_start = time;
      if (sqlite3_column_type(stmt, 11) == SQLITE_NULL) {
        rec.node.clear();
      } else {
        rec.node.assign(column_view(stmt, 11));
      }
    } else if (is_terminal(rec.state)) {
      rec.end = time;
    }
  }
  if (rc != SQLITE_DONE) return error("replaying run '" + std::string(run_id) + "'");
  auto by_task = [](const TaskRecord& a, const TaskRecord& b) { return a.task < b.task; };
  if (!std::is_sorted(tasks.begin(), tasks.end(), by_task)) {
    std::sort(tasks.begin(), tasks.end(), by_task);
  }
  return state;
}

Result<std::vector<EventRecord>> SqliteStore::events(std::string_view run_id) {
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();
  sqlite3_stmt* stmt = select_events_.get();
  ResetGuard guard(stmt);
  sqlite3_bind_int64(stmt, 1, *key << kSeqBits);
  sqlite3_bind_int64(stmt, 2, (*key << kSeqBits) | kSeqMask);
  std::vector<EventRecord> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    EventRecord& e = out.emplace_back();
    e.task = static_cast<TaskId>(sqlite3_column_int64(stmt, 0));
    e.name = column_string(stmt, 1);
    e.attempt = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 2));
    const auto state_text = column_view(stmt, 3);
    const auto parsed = parse_task_state(state_text);
    e.seq = sqlite3_column_int64(stmt, 8) & kSeqMask;
    if (!parsed) {
      return io_error("event " + std::to_string(e.seq) + " of run '" + std::string(run_id) +
                      "' in journal " + path_ + " has unknown state '" + std::string(state_text) +
                      "'");
    }
    e.state = *parsed;
    e.time = sqlite3_column_double(stmt, 4);
    e.exit_code = sqlite3_column_int(stmt, 5);
    e.fingerprint = std::bit_cast<std::uint64_t>(sqlite3_column_int64(stmt, 6));
    e.detail = column_string(stmt, 7);
    const std::int64_t kind_value = sqlite3_column_int64(stmt, 9);
    const auto kind = kind_from_code(kind_value);
    if (!kind) {
      return io_error("event " + std::to_string(e.seq) + " of run '" + std::string(run_id) +
                      "' in journal " + path_ + " has unknown task kind code " +
                      std::to_string(kind_value) + " (written by a newer chorus?)");
    }
    e.kind = *kind;
    // NULL: an event from before schema v2, when a task held one core unless it asked for more.
    e.cores = sqlite3_column_type(stmt, 10) == SQLITE_NULL ? 1 : sqlite3_column_int(stmt, 10);
    e.node = column_string(stmt, 11);
  }
  if (rc != SQLITE_DONE) return error("reading events of run '" + std::string(run_id) + "'");
  return out;
}

Result<std::vector<TaskGroup>> SqliteStore::task_groups(std::string_view run_id) {
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();
  sqlite3_stmt* stmt = select_groups_.get();
  ResetGuard guard(stmt);
  sqlite3_bind_int64(stmt, 1, *key);
  std::vector<TaskGroup> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    TaskGroup& g = out.emplace_back();
    g.task = static_cast<TaskId>(sqlite3_column_int64(stmt, 0));
    g.attempt = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 1));
    g.pgid = sqlite3_column_int64(stmt, 2);
    g.start_ticks = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 3));
  }
  if (rc != SQLITE_DONE) return error("reading task groups of run '" + std::string(run_id) + "'");
  return out;
}

Result<std::vector<PlacementRow>> SqliteStore::placements(std::string_view run_id) {
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();
  sqlite3_stmt* stmt = select_placements_.get();
  ResetGuard guard(stmt);
  sqlite3_bind_int64(stmt, 1, *key);
  std::vector<PlacementRow> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    PlacementRow& row = out.emplace_back();
    row.task = static_cast<TaskId>(sqlite3_column_int64(stmt, 0));
    row.attempt = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 1));
    row.name = column_string(stmt, 2);
    row.policy = column_string(stmt, 3);
    row.basis = column_string(stmt, 4);
    const auto* blob = static_cast<const char*>(sqlite3_column_blob(stmt, 5));
    const std::string_view bytes(blob != nullptr ? blob : "",
                                 static_cast<std::size_t>(sqlite3_column_bytes(stmt, 5)));
    if (!decode_candidates(bytes, row.candidates)) {
      return io_error("journal " + path_ + ": the placement record of task " +
                      std::to_string(row.task) + " attempt " + std::to_string(row.attempt) +
                      " of run '" + std::string(run_id) + "' is damaged");
    }
  }
  if (rc != SQLITE_DONE) return error("reading placements of run '" + std::string(run_id) + "'");
  return out;
}

Status SqliteStore::forget_task_groups(std::string_view run_id) {
  auto key = run_key(run_id);
  if (!key.ok()) return key.status();
  sqlite3_bind_int64(delete_groups_.get(), 1, *key);
  return step_done(delete_groups_.get(),
                   "forgetting task groups of run '" + std::string(run_id) + "'");
}

Status SqliteStore::check_integrity() {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, "PRAGMA quick_check(5)", -1, &raw, nullptr) != SQLITE_OK) {
    return error("checking the journal");
  }
  Stmt stmt(raw);
  std::string problems;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    std::string line = column_string(raw, 0);
    if (line == "ok") continue;
    if (!problems.empty()) problems += "; ";
    problems += line;
  }
  if (rc != SQLITE_DONE && problems.empty()) problems = sqlite3_errmsg(db_);
  if (problems.empty()) return {};
  return io_error("the journal " + path_ + " is damaged (" + problems +
                  "); no new run goes into it. Move it aside (mv " + path_ + " " + path_ +
                  ".damaged, with its -wal and -shm files) to start a new journal, or use another "
                  "state folder (--state DIR); `sqlite3 " +
                  path_ + " .recover` may save its runs");
}

Status SqliteStore::checkpoint() {
  int log_frames = 0;
  int copied = 0;
  int rc =
      sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &log_frames, &copied);
  if (rc == SQLITE_BUSY) {
    // A reader holds an old snapshot: copy what it allows, and say whether that was everything.
    rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &copied);
    if (rc == SQLITE_OK && copied < log_frames) {
      return Status(ErrorCode::unavailable, "journal " + path_ + ": a reader kept " +
                                                std::to_string(log_frames - copied) +
                                                " pages in the write-ahead log " + path_ + "-wal");
    }
  }
  if (rc != SQLITE_OK) return error("checkpointing the write-ahead log");
  return {};
}

// getrandom() blocks only before the kernel's pool is first seeded (early boot).
std::string new_run_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      // No getrandom (very old kernel): time and pid still make collisions unlikely on one host.
      const auto seed =
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
          (static_cast<std::uint64_t>(::getpid()) << 40);
      for (std::size_t i = got; i < sizeof bytes; ++i) {
        bytes[i] = static_cast<unsigned char>(seed >> (8 * (i % 8)));
      }
      break;
    }
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof bytes);
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Result<std::unique_ptr<StateStore>> open_sqlite_store(const std::string& path) {
  auto store = SqliteStore::open(path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<StateStore>(std::move(*store));
}

}  // namespace chorus
