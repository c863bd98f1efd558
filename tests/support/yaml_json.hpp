// A YAML file of Kubernetes objects (deploy/k8s/rbac.yaml) as JSON documents, for the tests that
// check its rules against the backend's and create its objects through the API. Scalars stay
// strings: the manifests read this way hold nothing else. The test binaries that include this
// link yaml-cpp (tests/CMakeLists.txt).
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace chorus::test {

inline nlohmann::json yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : n) j.push_back(yaml_to_json(e));
    return j;
  }
  if (n.IsScalar()) return n.as<std::string>();
  return nullptr;
}

inline std::vector<nlohmann::json> yaml_documents(const std::string& path) {
  std::vector<nlohmann::json> docs;
  for (const auto& d : YAML::LoadAllFromFile(path))
    if (d.IsMap()) docs.push_back(yaml_to_json(d));
  return docs;
}

}  // namespace chorus::test
