// The journal on a hostile disk: full, read-only, damaged, or missing its write-ahead log. Real
// file systems (a small tmpfs mounted by the test, root only) and the real chorus binary.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/tmpfs_mount.hpp"

using namespace chorus::test;

namespace {

constexpr const char* kTiny = R"Y(name: tiny
tasks:
  - name: a
    command: [/bin/true]
)Y";

// `n` tasks that print nothing: their events are the only thing the run writes.
std::string many_tasks(int n) {
  return "name: many\ntasks:\n  - name: t\n    foreach: {i: \"range(0, " + std::to_string(n) +
         ")\"}\n    command: [/bin/true]\n";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("Integration.Journal.FullDiskSaysTheDiskIsFull") {
  TempDir dir;
  const std::string disk_dir = dir / "disk";
  REQUIRE(::mkdir(disk_dir.c_str(), 0755) == 0);
  TmpfsMount disk(disk_dir, "1m");
  if (!disk.ok()) {
    MESSAGE("skipped: cannot mount a tmpfs here (the test needs root)");
    return;
  }
  const std::string state = disk_dir + "/.chorus";
  write_file(dir / "tiny.yaml", kTiny);
  write_file(dir / "many.yaml", many_tasks(500));
  auto first = run_chorus({"run", "tiny.yaml", "--state", state}, dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(disk.fill("filler") > 0);

  auto r = run_chorus({"run", "many.yaml", "--state", state}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(contains(r.err, "the disk is full"));
  CHECK(contains(r.err, state));
  CHECK(!contains(r.err, "disk I/O error"));
}

TEST_CASE("Integration.Journal.ReadOnlyStateFolderSaysItIsReadOnly") {
  TempDir dir;
  const std::string disk_dir = dir / "disk";
  REQUIRE(::mkdir(disk_dir.c_str(), 0755) == 0);
  TmpfsMount disk(disk_dir, "4m");
  if (!disk.ok()) {
    MESSAGE("skipped: cannot mount a tmpfs here (the test needs root)");
    return;
  }
  const std::string state = disk_dir + "/.chorus";
  write_file(dir / "tiny.yaml", kTiny);
  auto first = run_chorus({"run", "tiny.yaml", "--state", state}, dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  REQUIRE(disk.make_read_only());

  auto r = run_chorus({"run", "tiny.yaml", "--state", state}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(contains(r.err, "read-only"));
  CHECK(contains(r.err, state));
  CHECK(!contains(r.err, "No such file or directory"));

  // A state folder that does not exist yet, on the read-only file system.
  auto fresh = run_chorus({"run", "tiny.yaml", "--state", disk_dir + "/other"}, dir.path());
  INFO(fresh.err);
  CHECK(fresh.exit_code == 3);
  CHECK(contains(fresh.err, "read-only"));
  CHECK(contains(fresh.err, disk_dir + "/other"));
}

TEST_CASE("Integration.Journal.FinishedRunSurvivesLosingTheWriteAheadLog") {
  TempDir dir;
  write_file(dir / "tiny.yaml", kTiny);
  auto r = run_chorus({"run", "tiny.yaml"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::remove((dir / ".chorus/chorus.db-wal").c_str());
  std::remove((dir / ".chorus/chorus.db-shm").c_str());

  auto status = run_chorus({"status", "--json", "tiny-1"}, dir.path());
  INFO(status.err);
  REQUIRE(status.exit_code == 0);
  auto j = nlohmann::json::parse(status.out, nullptr, false);
  REQUIRE(!j.is_discarded());
  CHECK(j["status"] == "succeeded");
  CHECK(j["succeeded"] == 1);
}

TEST_CASE("Integration.Journal.NewRunRefusesADamagedJournal") {
  TempDir dir;
  write_file(dir / "many.yaml", many_tasks(400));
  auto first = run_chorus({"run", "many.yaml"}, dir.path());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  // Garbage over a page in the middle of the file: old events, which a new run never reads.
  const std::string db = dir / ".chorus/chorus.db";
  struct stat st {};
  REQUIRE(::stat(db.c_str(), &st) == 0);
  const long pages = static_cast<long>(st.st_size / 4096);
  REQUIRE(pages >= 8);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((pages / 2) * 4096);
    const std::string garbage(4096, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }

  auto r = run_chorus({"run", "many.yaml"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(contains(r.err, db));
  CHECK(contains(r.err, "damaged"));
  CHECK(contains(r.err, "--state"));
  // Nothing went in: the journal still lists one run.
  CHECK(!contains(run_chorus({"list"}, dir.path()).out, "many-2"));
}
