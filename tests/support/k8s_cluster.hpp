// The real Kubernetes cluster the k8s tests share (tests/k8s/cluster.sh), started by the ctest
// fixture k8s_cluster (tests/CMakeLists.txt: one start before the cases, one stop after, even
// when a case fails). A case asks for it with k8s_kubeconfig(): the admin kubeconfig, or the
// case is skipped with the reason when the kit could be neither found nor built.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// `method` on `path` with the admin token through curl (the test's own view of the cluster, not
// ours), `body` sent as JSON when given; the answer's body.
inline std::string k8s_curl(const std::string& method, const std::string& path,
                            const std::string& body = {}) {
  std::string token, server;
  for (const auto& line : read_lines(k8s_dir() + "/kubeconfig")) {
    if (auto at = line.find("token: "); at != std::string::npos) token = line.substr(at + 7);
    if (auto at = line.find("server: "); at != std::string::npos) server = line.substr(at + 8);
  }
  std::vector<std::string> argv{"curl",     "-sS",
                                "-X",       method,
                                "--cacert", k8s_dir() + "/pki/ca.crt",
                                "-H",       "Authorization: Bearer " + token};
  if (!body.empty()) {
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data", body});
  }
  argv.push_back(server + path);
  return run_process(argv, "/").out;
}

// GET path.
inline std::string k8s_get(const std::string& path) {
  return k8s_curl("GET", path);
}

// DELETE path (a case's own cleanup of what a run could not delete).
inline void k8s_delete(const std::string& path) {
  (void)k8s_curl("DELETE", path);
}

// GET path as JSON: an object, empty when the answer is not one.
inline nlohmann::json k8s_get_json(const std::string& path) {
  auto j = nlohmann::json::parse(k8s_get(path), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

// How many objects of `kind` ("pods", "services") in namespace default carry chorus.run=<run>;
// 999 when the server's answer is no list, so "none left" never passes on a broken answer.
inline std::size_t k8s_left_of_run(const std::string& run, const std::string& kind = "pods") {
  auto j =
      k8s_get_json("/api/v1/namespaces/default/" + kind + "?labelSelector=chorus.run%3D" + run);
  return j.contains("items") && j["items"].is_array() ? j["items"].size() : 999;
}

// The workflow defaults every k8s case uses: the cluster's local busybox image, never pulled.
inline const char* const kK8sDefaults = R"(defaults:
  image: localhost/busybox:1.35
  image_pull_policy: Never
)";

// `chorus run wf.yaml --backend kubernetes --kubeconfig KC [extra...]` in `dir`.
inline ProcessResult run_k8s(const TempDir& dir, const std::string& kubeconfig,
                             std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {chorus_bin(), "run",          "wf.yaml", "--backend",
                                   "kubernetes", "--kubeconfig", kubeconfig};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_process(argv, dir.path());
}

}  // namespace chorus::test
