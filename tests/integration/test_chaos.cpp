// The suite's instance of bench/chaos/run_chaos.py: a small workflow SIGKILLed three times at
// seeded moments (the first run and its resumes), resumed to the end. Any lost task, rerun of a
// journaled success, leftover process or failed journal integrity_check fails it.
#include <doctest/doctest.h>

#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Integration.Chaos.KilledAndResumedRunLosesAndRerunsNothing") {
  TempDir dir;
  auto r = run_process({"python3",       source_dir() + "/bench/chaos/run_chaos.py",
                        "--chorus",      chorus_bin(),
                        "--tasks",       "300",
                        "--kills",       "3",
                        "--seed",        "7",
                        "--cores",       "8",
                        "--min-delay",   "0.3",
                        "--max-delay",   "1.2",
                        "--run-timeout", "120",
                        "--workdir",     dir.path(),
                        "--no-write"},
                       dir.path());
  INFO(r.out);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  // The table row: 3 kills, then lost, reruns and leftovers all 0.
  CHECK(r.out.find("| 300 | 3 | 7 |") != std::string::npos);
}
