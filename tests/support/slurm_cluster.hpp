// The real Slurm cluster the slurm tests share (tests/slurm/cluster.sh): started on first use
// unless it already runs, stopped when the test process exits if this process started it.
// SLURM_CONF (inherited by chorus and the Slurm commands) points at it.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support/process.hpp"

namespace chorus::test {

inline std::string slurm_cluster_script() {
  return source_dir() + "/tests/slurm/cluster.sh";
}

inline std::string slurm_cluster_dir() {
  const char* d = std::getenv("CHORUS_SLURM_DIR");
  return d != nullptr && *d != '\0' ? d : "/tmp/chorus-slurm";
}

class SlurmCluster {
 public:
  // One per test process (an inline function's static: shared by every test file).
  static SlurmCluster& get() {
    static SlurmCluster cluster;
    return cluster;
  }
  const std::string& conf() const { return conf_; }

 private:
  SlurmCluster() {
    started_here_ = run_process({slurm_cluster_script(), "status"}, "/").exit_code != 0;
    auto start = run_process({slurm_cluster_script(), "start"}, "/");
    INFO(start.out, start.err);
    REQUIRE_MESSAGE(start.exit_code == 0, "tests/slurm/cluster.sh start failed");
    conf_ = slurm_cluster_dir() + "/etc/slurm.conf";
    setenv("SLURM_CONF", conf_.c_str(), 1);
  }
  ~SlurmCluster() {
    if (started_here_) run_process({slurm_cluster_script(), "stop"}, "/");
  }
  bool started_here_ = false;
  std::string conf_;
};

}  // namespace chorus::test
