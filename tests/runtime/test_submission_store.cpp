// SubmissionStore on a real SQLite file: what a served instance accepted, found again by key and
// by run, and the owners `chorus list` filters, across a reopen.
#include <doctest/doctest.h>

#include "runtime/store/submission_store.hpp"
#include "support/process.hpp"

using namespace chorus;

TEST_CASE("Runtime.SubmissionStore.RunsAreFoundByKeyAndByRunAcrossAReopen") {
  chorus::test::TempDir dir;
  const std::string path = dir / "serve.db";
  {
    auto store = SubmissionStore::open(path);
    REQUIRE(store.ok());
    for (int i = 0; i < 3; ++i) {
      Submission s{static_cast<std::uint32_t>(1000 + i % 2),
                   "u",
                   "key-" + std::to_string(i),
                   "run-" + std::to_string(i),
                   "/w/wf.yaml",
                   "name: x\n",
                   "/w",
                   1.0 + i};
      REQUIRE((*store)->add(s).ok());
    }
    Submission again{1000, "u", "key-0", "run-9", "/w/wf.yaml", "name: x\n", "/w", 9};
    CHECK((*store)->add(again).code() == ErrorCode::unavailable);  // (uid, key) is taken
  }
  auto store = SubmissionStore::open(path);
  REQUIRE(store.ok());
  auto found = (*store)->find(1000, "key-2");
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->run_id == "run-2");
  auto by_run = (*store)->find_by_run("run-1");
  REQUIRE(by_run.ok());
  REQUIRE(by_run->has_value());
  CHECK((*by_run)->key == "key-1");
  CHECK_FALSE((*(*store)->find_by_run("run-9")).has_value());
  CHECK((*(*store)->owner_of("run-1")) == std::optional<std::uint32_t>(1001));
  CHECK_FALSE((*(*store)->owner_of("run-9")).has_value());
  auto owners = (*store)->owners();
  REQUIRE(owners.ok());
  CHECK(*owners == std::vector<std::pair<std::string, std::uint32_t>>{
                       {"run-0", 1000}, {"run-1", 1001}, {"run-2", 1000}});
}
