#include "core/policy_options.hpp"

namespace chorus {

std::string OptionOrigin::format() const {
  if (!in_file()) return source;
  return source + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string OptionValue::describe() const {
  switch (kind) {
    case Kind::map:
      return "a map";
    case Kind::list:
      return "a list";
    case Kind::null:
      return "nothing";
    case Kind::scalar:
      break;
  }
  // Messages stay short, as the workflow reader's do.
  constexpr std::size_t kShown = 80;
  if (text.size() <= kShown) return "'" + text + "'";
  std::size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return "'" + text.substr(0, cut) + "...' (" + std::to_string(text.size()) + " bytes)";
}

const OptionEntry* PolicyOptions::find(std::string_view key) const {
  for (const auto& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

void PolicyOptions::set(OptionEntry entry) {
  for (auto& e : entries) {
    if (e.key == entry.key) {
      e = std::move(entry);
      return;
    }
  }
  entries.push_back(std::move(entry));
}

std::string OptionIssue::format() const {
  const std::string where = at.format();
  return where.empty() ? message : where + ": " + message;
}

std::string format_issues(const std::vector<OptionIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    if (!out.empty()) out += '\n';
    out += i.format();
  }
  return out;
}

}  // namespace chorus
