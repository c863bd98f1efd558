// Kubeconfig is Kubernetes' own YAML format, read here with yaml-cpp (the one departure from
// yaml-cpp's home in workflows/, listed in cmake/check_layering.cmake): a workflow reader has no
// business knowing clusters, users and contexts.
#include "adapters/kubernetes/kube_config.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace chorus::kube {
namespace {

Result<std::string> read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(what + ": cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// RFC 4648 base64 with or without padding; whitespace skipped. Kubeconfig's `*-data` fields
// are the only users; a four-line decoder beats a crypto library dependency for that.
Result<std::string> base64_decode(const std::string& in, const std::string& field) {
  std::array<int, 256> value{};
  value.fill(-1);
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) value[static_cast<unsigned char>(alphabet[i])] = i;
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int v = value[static_cast<unsigned char>(c)];
    if (v < 0)
      return invalid_argument(field + " is not base64 (character '" + std::string(1, c) + "')");
    bits = (bits << 6) | static_cast<unsigned>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// A `path` field relative to the kubeconfig's folder, as kubectl resolves it.
std::string relative_to(const std::string& file, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return dir_of(file) + "/" + path;
}

// The entry of `list` (clusters, users, contexts) called `name`.
YAML::Node named(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return {};
  for (const auto& e : list)
    if (e["name"] && e["name"].as<std::string>() == name) return e;
  return {};
}

std::string str(const YAML::Node& n, const char* key) {
  return n && n[key] && n[key].IsScalar() ? n[key].as<std::string>() : std::string{};
}

// `<field>-data` (base64) or `<field>` (a file): one PEM.
Result<std::string> pem(const YAML::Node& n, const std::string& field, const std::string& file,
                        const std::string& where) {
  std::string data = str(n, (field + "-data").c_str());
  if (!data.empty()) return base64_decode(data, file + ": " + where + "." + field + "-data");
  std::string path = str(n, field.c_str());
  if (path.empty()) return std::string{};
  return read_file(relative_to(file, path), file + ": " + where + "." + field);
}

}  // namespace

Result<KubeConfig> load_kube_config(const std::string& path, const std::string& context) {
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return not_found("no kubeconfig at " + path +
                     ": pass --kubeconfig FILE, set KUBECONFIG, or run inside a Pod");
  } catch (const YAML::Exception& e) {
    return invalid_argument(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                            std::to_string(e.mark.column + 1) + ": not a kubeconfig: " + e.msg);
  }
  KubeConfig c;
  c.source = path;
  c.context = context.empty() ? str(doc, "current-context") : context;
  if (c.context.empty())
    return invalid_argument(path + ": no current-context; pass --context NAME");
  YAML::Node ctx = named(doc["contexts"], c.context)["context"];
  if (!ctx) return not_found(path + ": no context named '" + c.context + "'");
  std::string cluster_name = str(ctx, "cluster");
  std::string user_name = str(ctx, "user");
  if (std::string ns = str(ctx, "namespace"); !ns.empty()) c.namespace_name = ns;
  YAML::Node cluster = named(doc["clusters"], cluster_name)["cluster"];
  if (!cluster)
    return not_found(path + ": context '" + c.context + "' names cluster '" + cluster_name +
                     "', which is not in clusters:");
  c.server = str(cluster, "server");
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.empty())
    return invalid_argument(path + ": cluster '" + cluster_name + "' has no server");
  c.insecure = str(cluster, "insecure-skip-tls-verify") == "true";
  auto ca = pem(cluster, "certificate-authority", path, "clusters[" + cluster_name + "]");
  if (!ca) return ca.status();
  c.ca_pem = std::move(*ca);
  if (!user_name.empty()) {
    YAML::Node user = named(doc["users"], user_name)["user"];
    if (!user)
      return not_found(path + ": context '" + c.context + "' names user '" + user_name +
                       "', which is not in users:");
    if (user["exec"] || user["auth-provider"])
      return invalid_argument(path + ": user '" + user_name +
                              "' authenticates through an exec plugin or auth provider, which "
                              "chorus does not run; use a token or a client certificate");
    c.token = str(user, "token");
    if (std::string tf = str(user, "tokenFile"); c.token.empty() && !tf.empty()) {
      auto t = read_file(relative_to(path, tf), path + ": users[" + user_name + "].tokenFile");
      if (!t) return t.status();
      c.token = *t;
      while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r'))
        c.token.pop_back();
    }
    std::string where = "users[" + user_name + "]";
    auto cert = pem(user, "client-certificate", path, where);
    if (!cert) return cert.status();
    auto key = pem(user, "client-key", path, where);
    if (!key) return key.status();
    c.client_cert_pem = std::move(*cert);
    c.client_key_pem = std::move(*key);
    if (c.client_cert_pem.empty() != c.client_key_pem.empty())
      return invalid_argument(path + ": " + where +
                              " has a client certificate without its key (or the key alone)");
  }
  return c;
}

Result<KubeConfig> in_cluster_config(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0')
    return not_found("not inside a Pod: KUBERNETES_SERVICE_HOST is not set");
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  c.server = "https://" + h + ":" + (port != nullptr && *port != '\0' ? port : "443");
  auto token = read_file(sa_dir + "/token", "the Pod's service account token");
  if (!token) return token.status();
  c.token = *token;
  auto ca = read_file(sa_dir + "/ca.crt", "the Pod's cluster CA");
  if (!ca) return ca.status();
  c.ca_pem = *ca;
  if (auto ns = read_file(sa_dir + "/namespace", "namespace"); ns && !ns->empty())
    c.namespace_name = *ns;
  c.context = "in-cluster";
  c.source = sa_dir;
  return c;
}

Result<KubeConfig> resolve_kube_config(const std::string& path, const std::string& context) {
  if (!path.empty()) return load_kube_config(path, context);
  const char* in_pod = std::getenv("KUBERNETES_SERVICE_HOST");
  if (in_pod != nullptr && *in_pod != '\0' && context.empty()) return in_cluster_config();
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::string first = env;
    first = first.substr(0, first.find(':'));
    return load_kube_config(first, context);
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0')
    return not_found("no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG");
  return load_kube_config(std::string(home) + "/.kube/config", context);
}

}  // namespace chorus::kube
