#include "adapters/kubernetes/service_object.hpp"

#include <cctype>
#include <cstdio>

#include "core/hash.hpp"

namespace chorus::kube {
namespace {

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

std::string digest(const std::string& text) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06llx",
                static_cast<unsigned long long>(Fnv1a().add(text).value() & 0xffffffULL));
  return buf;
}

void trim_ends(std::string& s) {
  while (!s.empty() && !alnum(s.front())) s.erase(0, 1);
  while (!s.empty() && !alnum(s.back())) s.pop_back();
}

// `text` (lowercased when `lower`) made of `ok` characters (others become '-'), at most `room`;
// when that changed it, cut to leave room for "-<digest>" and ended with it.
std::string fitted(const std::string& text, std::size_t room, bool (*ok)(char), bool lower) {
  std::string out;
  for (char c : text) {
    if (lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back(ok(c) ? c : '-');
  }
  std::string trimmed = out;
  trim_ends(trimmed);
  if (trimmed == text && text.size() <= room) return text;
  const std::string tail = digest(text);
  if (out.size() > room - tail.size() - 1) out.resize(room - tail.size() - 1);
  trim_ends(out);
  return out.empty() ? tail : out + "-" + tail;
}

bool label_char(char c) {
  return alnum(c) || c == '.' || c == '_' || c == '-';
}

bool dns_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

}  // namespace

std::string service_label(const std::string& service) {
  return fitted(service, 63, label_char, false);
}

std::string service_object_name(const std::string& run_label, const std::string& service) {
  std::string run;
  for (char c : run_label) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    run.push_back(dns_char(l) ? l : '-');
  }
  // The service part first (at most 40, so some of the run stays), then the run cut from its
  // front to fill "chorus-<run>-<service>" up to 63.
  std::string svc = fitted(service, 40, dns_char, true);
  std::size_t room = 63 - 7 - 1 - svc.size();  // "chorus-", "-"
  if (run.size() > room) run = run.substr(run.size() - room);
  trim_ends(run);
  return run.empty() ? "chorus-" + svc : "chorus-" + run + "-" + svc;
}

nlohmann::json service_manifest(const ServiceSpec& service, const std::string& run_label,
                                const std::string& token, const std::string& name,
                                const OwnerPod& owner) {
  using nlohmann::json;
  const std::string label = service_label(service.name);
  json labels = {{"chorus.run", run_label}, {"chorus.service", label}};
  json selector = {{"chorus.service", label}};
  if (token.empty()) {
    selector["chorus.run"] = run_label;
  } else {
    labels["chorus.token"] = token;
    selector["chorus.token"] = token;
  }
  json spec = {{"clusterIP", "None"}, {"selector", selector}};
  if (service.ready.kind == ProbeKind::tcp || service.ready.kind == ProbeKind::http)
    spec["ports"] = json::array({{{"name", "service"},
                                  {"port", service.ready.port},
                                  {"targetPort", "service"},
                                  {"protocol", "TCP"}}});
  json metadata = {
      {"name", name}, {"labels", labels}, {"annotations", {{"chorus.service-name", service.name}}}};
  if (json owners = owner_references(owner); !owners.is_null())
    metadata["ownerReferences"] = owners;
  return {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", metadata}, {"spec", spec}};
}

}  // namespace chorus::kube
