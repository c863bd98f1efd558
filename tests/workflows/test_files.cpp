// File-level cases of load_workflow_file: each writes into its own fresh temp directory.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/workflow_parsing.hpp"

using namespace chorus;
using chorus::test::contains;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "chorus-wf-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& content) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

TEST_CASE("Workflows.Files.LoadsAFileAndRecordsItsAbsolutePath") {
  TempDir dir;
  const std::string p = dir.write("pipeline.yaml", "tasks:\n  - {name: a, command: [x]}\n");
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->name == "pipeline");
  CHECK(r->source_path == p);
  CHECK(std::filesystem::path(r->source_path).is_absolute());
  CHECK(r->tasks.size() == 1);
}

TEST_CASE("Workflows.Files.DiagnosticsUseThePathAsGiven") {
  TempDir dir;
  const std::string p = dir.write("bad.yaml", "tasks:\n  - {name: a, comand: [x]}\n");
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  CHECK(r.status().message().starts_with(p + ":2:12: task 'a' has no 'command'\n"));
  CHECK(contains(r.status().message(), "\n" + p + ":2:15: unknown key 'comand' in task 'a'"));
}

TEST_CASE("Workflows.Files.NonexistentPathGivesErrnoText") {
  TempDir dir;
  const std::string p = dir.path() + "/missing.yaml";
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::not_found);
  CHECK(r.status().message() == p + ": cannot open: No such file or directory");
}

TEST_CASE("Workflows.Files.DirectoryIsRefused") {
  TempDir dir;
  auto r = load_workflow_file(dir.path(), chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().message() == dir.path() + ": is a directory, not a workflow file");
}

TEST_CASE("Workflows.Files.FifoIsRefusedWithoutBlocking") {
  TempDir dir;
  const std::string p = dir.path() + "/fifo.yaml";
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().message() == p + ": is not a regular file");
}

TEST_CASE("Workflows.Files.EmptyFile") {
  TempDir dir;
  const std::string p = dir.write("empty.yaml", "");
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().message() == p + ":1:1: the file is empty; a workflow needs at least 'tasks:'");
}

TEST_CASE("Workflows.Files.BinaryFileIsNotText") {
  TempDir dir;
  std::string bytes = "tasks:\n";
  bytes += std::string(
      "\x7f"
      "ELF\0\0\x01\x02",
      8);
  const std::string p = dir.write("prog.yaml", bytes);
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().message() ==
        p + ":2:5: not a text file: a NUL byte at offset 11; a workflow file is YAML text");
}

TEST_CASE("Workflows.Files.HugeFileIsRefusedBeforeParsing") {
  TempDir dir;
  const std::string p = dir.path() + "/huge.yaml";
  {
    std::ofstream out(p, std::ios::binary);
    out << "tasks:\n";
    const std::string line = "  - {name: t, command: [x]}   # padding padding padding padding\n";
    for (std::uint64_t written = 0; written < 50ull * 1024 * 1024; written += line.size())
      out << line;
  }
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(r.status().code() == ErrorCode::invalid_argument);
  const auto size = std::filesystem::file_size(p);
  const std::string m = r.status().message();
  CHECK(m.starts_with(p + ": the file is " + std::to_string(size) + " bytes (50"));
  CHECK(
      m.ends_with(" MiB); workflow files are limited to 16 MiB (use foreach sweeps instead of "
                  "listing tasks one by one)"));
}

TEST_CASE("Workflows.Files.DeeplyNestedFileIsAnError") {
  TempDir dir;
  const std::string p = dir.write("deep.yaml", "tasks: " + std::string(10'000, '[') + "\n");
  auto r = load_workflow_file(p, chorus::test::test_options());
  REQUIRE(!r.ok());
  CHECK(contains(r.status().message(), p + ":1:72: nesting is deeper than 64 levels"));
}

TEST_CASE("Workflows.Files.EmptyBaseDirMeansCurrentDirectory") {
  TempDir dir;
  const std::string p = dir.write("w.yaml", "workdir: sub\ntasks: [{name: a, command: [x]}]\n");
  WorkflowLoadOptions o;
  auto r = load_workflow_file(p, o);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(r->workdir == (std::filesystem::current_path() / "sub").string());
}
