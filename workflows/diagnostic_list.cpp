#include "workflows/diagnostic_list.hpp"

#include <algorithm>
#include <tuple>

namespace chorus {

void DiagnosticList::add(Position at, std::string message) {
  ++reports_;
  std::string key = std::to_string(at.line) + ':' + std::to_string(at.column) + ':' + message;
  if (!seen_.insert(std::move(key)).second) return;
  if (items_.size() >= kMaxKept) {
    ++dropped_;
    return;
  }
  items_.push_back(Diagnostic{path_, at.line, at.column, std::move(message)});
}

Status DiagnosticList::to_status() const {
  std::vector<Diagnostic> sorted = items_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  const std::size_t total = size();
  const std::size_t shown = total > kMaxShown ? kMaxShown - 1 : sorted.size();
  std::string text;
  for (std::size_t i = 0; i < shown; ++i) {
    if (!text.empty()) text += '\n';
    text += sorted[i].format();
  }
  if (shown < total) {
    text +=
        '\n' + Diagnostic{path_, 0, 0,
                          "... and " + std::to_string(total - shown) + " more problems not shown"}
                   .format();
  }
  return invalid_argument(text);
}

}  // namespace chorus
