// The network test bed (tests/netbed/netbed.py) from a test: run its commands, and a guard that
// removes a bed whatever happens to the test case.
#pragma once

#include <string>
#include <vector>

#include "support/process.hpp"

namespace chorus::test {

inline std::string netbed_py() {
  return source_dir() + "/tests/netbed/netbed.py";
}

// `python3 tests/netbed/netbed.py ARGS...` in `cwd`.
inline ProcessResult netbed(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv{"python3", netbed_py()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd);
}

// Runs `netbed.py down --prefix PREFIX` when it goes out of scope.
struct BedGuard {
  std::string prefix, cwd;
  ~BedGuard() { netbed({"down", "--prefix", prefix}, cwd); }
};

}  // namespace chorus::test
