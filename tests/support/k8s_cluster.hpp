// The real Kubernetes cluster the k8s tests share (tests/k8s/cluster.sh), started by the ctest
// fixture k8s_cluster (tests/CMakeLists.txt: one start before the cases, one stop after, even
// when a case fails). A case asks for it with k8s_kubeconfig(): the admin kubeconfig, or the
// case is skipped with the reason when the kit could be neither found nor built.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support/process.hpp"

namespace chorus::test {

inline std::string k8s_dir() {
  const char* d = std::getenv("CHORUS_K8S_DIR");
  return d != nullptr && *d != '\0' ? d : "/tmp/chorus-k8s";
}

// "" when there is no cluster; the test then says why and passes nothing off as tested.
inline std::string k8s_kubeconfig(const char* which = "kubeconfig") {
  std::string path = k8s_dir() + "/" + which;
  if (file_exists(path)) return path;
  auto start = run_process({source_dir() + "/tests/k8s/cluster.sh", "start"}, "/");
  if (start.exit_code == 77) {
    MESSAGE("skipped: no Kubernetes kit: " << start.err);
    return {};
  }
  INFO(start.out, start.err);
  REQUIRE_MESSAGE(start.exit_code == 0, "tests/k8s/cluster.sh start failed");
  return path;
}

// GET path with the admin token, through curl (the test's own view of the cluster, not ours).
inline std::string k8s_get(const std::string& path) {
  std::string token;
  for (const auto& line : read_lines(k8s_dir() + "/kubeconfig"))
    if (auto at = line.find("token: "); at != std::string::npos) token = line.substr(at + 7);
  std::string server;
  for (const auto& line : read_lines(k8s_dir() + "/kubeconfig"))
    if (auto at = line.find("server: "); at != std::string::npos) server = line.substr(at + 8);
  auto r = run_process({"curl", "-sS", "--cacert", k8s_dir() + "/pki/ca.crt", "-H",
                        "Authorization: Bearer " + token, server + path},
                       "/");
  return r.out;
}

}  // namespace chorus::test
