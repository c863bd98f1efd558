#include "workflows/image_reference.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace chorus {
namespace {

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool alnum(char c) {
  return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)*
bool path_component(std::string_view s) {
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    while (i < s.size() && lower_alnum(s[i])) ++i;
    if (i == start) return false;
    if (i == s.size()) return true;
    const std::size_t sep = i;
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (sep == i) return false;
  }
}

// host[:port]: dot-separated labels of letters, digits and inner '-', then an optional port.
bool registry_host(std::string_view s) {
  std::string_view host = s;
  if (auto colon = s.find(':'); colon != std::string_view::npos) {
    const std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    host = s.substr(0, colon);
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = host.find('.', start);
    const std::string_view label =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !alnum(label.front()) || !alnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [](char c) { return alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

std::string image_reference_problem(const std::string& ref) {
  if (ref.empty()) return "it is empty";
  for (char c : ref) {
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return "it must not contain spaces or control characters";
  }
  std::string_view rest = ref;
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view digest = rest.substr(at + 1);
    constexpr std::string_view kAlgorithm = "sha256:";
    if (digest.substr(0, kAlgorithm.size()) != kAlgorithm ||
        digest.size() != kAlgorithm.size() + 64 ||
        !std::all_of(digest.begin() + kAlgorithm.size(), digest.end(), hex)) {
      return "the digest '" + std::string(digest) +
             "' must be sha256: followed by 64 lowercase hex digits";
    }
    rest = rest.substr(0, at);
  }
  // A ':' after the last '/' starts the tag; one before it belongs to the registry's port.
  const std::size_t slash = rest.rfind('/');
  const std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    const std::string_view tag = rest.substr(colon + 1);
    if (tag.empty() || tag.size() > 128 || !(alnum(tag.front()) || tag.front() == '_') ||
        !std::all_of(tag.begin(), tag.end(),
                     [](char c) { return alnum(c) || c == '_' || c == '.' || c == '-'; })) {
      return "the tag '" + std::string(tag) +
             "' must be 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'";
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return "it has no repository name";
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t next = rest.find('/', start);
    parts.push_back(
        rest.substr(start, next == std::string_view::npos ? std::string_view::npos : next - start));
    if (next == std::string_view::npos) break;
    start = next + 1;
  }
  std::size_t first = 0;
  if (parts.size() > 1 &&
      (parts[0].find_first_of(".:") != std::string_view::npos || parts[0] == "localhost")) {
    if (!registry_host(parts[0])) {
      return "the registry '" + std::string(parts[0]) +
             "' must be a host name with an optional :port";
    }
    first = 1;
  }
  for (std::size_t i = first; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p.empty()) return "it has an empty path component (a '/' too many)";
    if (path_component(p)) continue;
    std::string lowered(p);
    for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lowered != p && path_component(lowered)) {
      return "the repository '" + std::string(p) + "' must be lowercase";
    }
    return "the repository component '" + std::string(p) +
           "' must be lowercase letters and digits joined by '.', '_', '__' or '-'";
  }
  return {};
}

bool is_image_pull_policy(const std::string& policy) {
  return policy == "Always" || policy == "IfNotPresent" || policy == "Never";
}

}  // namespace chorus
