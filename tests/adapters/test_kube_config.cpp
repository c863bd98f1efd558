// Reading kubeconfig files (adapters/kubernetes/kube_config.*): the three ways of saying who we
// are, and the errors a user with a wrong file gets. The real cluster's own kubeconfigs are read
// in tests/k8s/.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "adapters/kubernetes/kube_cluster.hpp"
#include "adapters/kubernetes/kube_config.hpp"
#include "support/process.hpp"

using namespace chorus;
using namespace chorus::kube;

namespace {

std::string write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return dir / name;
}

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: aGVsbG8gY2E=
- name: c2
  cluster:
    server: https://10.0.0.1
    certificate-authority: ca.pem
contexts:
- name: a
  context: {cluster: c1, user: u1, namespace: team}
- name: b
  context: {cluster: c2, user: u2}
users:
- name: u1
  user: {token: abc.def}
- name: u2
  user: {client-certificate: cert.pem, client-key: key.pem}
)";

}  // namespace

TEST_CASE("Kubeconfig.CurrentContextWithTokenAndInlineCa") {
  test::TempDir dir;
  auto c = load_kube_config(write(dir, "config", kTwoContexts));
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->server == "https://127.0.0.1:6443");
  CHECK(c->ca_pem == "hello ca");
  CHECK(c->token == "abc.def");
  CHECK(c->namespace_name == "team");
  CHECK(c->context == "a");
}

TEST_CASE("Kubeconfig.NamedContextWithFilesRelativeToTheConfig") {
  test::TempDir dir;
  write(dir, "ca.pem", "CA");
  write(dir, "cert.pem", "CERT");
  write(dir, "key.pem", "KEY");
  auto c = load_kube_config(write(dir, "config", kTwoContexts), "b");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->ca_pem == "CA");
  CHECK(c->client_cert_pem == "CERT");
  CHECK(c->client_key_pem == "KEY");
  CHECK(c->token.empty());
  CHECK(c->namespace_name == "default");
}

TEST_CASE("Kubeconfig.ErrorsNameTheFileAndWhatIsWrong") {
  test::TempDir dir;
  auto missing = load_kube_config(dir / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("no kubeconfig at " + (dir / "nope")) != std::string::npos);
  CHECK(missing.status().message().find("KUBECONFIG") != std::string::npos);

  auto file = write(dir, "config", kTwoContexts);
  auto no_ctx = load_kube_config(file, "zzz");
  REQUIRE_FALSE(no_ctx.ok());
  CHECK(no_ctx.status().message() == file + ": no context named 'zzz'");

  // Context b's files are not there.
  auto no_ca = load_kube_config(file, "b");
  REQUIRE_FALSE(no_ca.ok());
  CHECK(no_ca.status().message().find("clusters[c2].certificate-authority: cannot read " +
                                      (dir / "ca.pem")) != std::string::npos);

  auto bad_yaml = load_kube_config(write(dir, "bad", "clusters: [\n  - a: b\n  c"));
  REQUIRE_FALSE(bad_yaml.ok());
  CHECK(bad_yaml.status().message().rfind(dir / "bad:", 0) == 0);

  auto exec = load_kube_config(write(dir, "exec", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)"));
  REQUIRE_FALSE(exec.ok());
  CHECK(exec.status().message().find("exec plugin") != std::string::npos);
}

TEST_CASE("Kubeconfig.InClusterFromTheServiceAccountFiles") {
  test::TempDir dir;
  write(dir, "token", "tok");
  write(dir, "ca.crt", "CA");
  write(dir, "namespace", "jobs");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = in_cluster_config(dir.path());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  CHECK(c->server == "https://10.96.0.1:443");
  CHECK(c->token == "tok");
  CHECK(c->namespace_name == "jobs");
  CHECK_FALSE(in_cluster_config(dir.path()).ok());  // not in a Pod any more
}

TEST_CASE("Kubeconfig.Quantities") {
  CHECK(parse_quantity("4").value() == doctest::Approx(4));
  CHECK(parse_quantity("3500m").value() == doctest::Approx(3.5));
  CHECK(parse_quantity("8Gi").value() == doctest::Approx(8.0 * 1024 * 1024 * 1024));
  CHECK(parse_quantity("123456Ki").value() == doctest::Approx(123456.0 * 1024));
  CHECK(parse_quantity("1e3").value() == doctest::Approx(1000));
  CHECK_FALSE(parse_quantity("4 cores").has_value());
  CHECK_FALSE(parse_quantity("").has_value());
}
