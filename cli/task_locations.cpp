#include "cli/task_locations.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "workflows/diagnostic.hpp"

namespace chorus::cli {
namespace {

constexpr std::size_t kMaxDiagnostics = 20;

}  // namespace

std::string display_path(const std::string& path) {
  std::error_code ec;
  const auto rel = std::filesystem::proximate(path, ec).string();
  return !ec && rel.rfind("..", 0) != 0 ? rel : path;
}

Status locate_missing_estimates(const WorkflowGraph& graph, const std::string& path,
                                const std::function<bool(const TaskSpec&)>& lacking,
                                const std::string& need, const std::string& fix) {
  // Per task entry (a sweep's members share one): how many members lack it.
  struct Entry {
    std::string name;
    SourcePos pos;  // its first task's: a sweep's members share their entry's
    std::size_t count = 0;
  };
  std::vector<Entry> missing;
  std::map<std::string, std::size_t> index;
  for (const auto& t : graph.tasks) {
    if (!lacking(t)) continue;
    const std::string entry = t.name.substr(0, t.name.find('['));
    auto [it, added] = index.emplace(entry, missing.size());
    if (added) missing.push_back({entry, path.empty() ? SourcePos{} : t.pos, 0});
    ++missing[it->second].count;
  }
  if (missing.empty()) return {};
  std::vector<std::pair<SourcePos, std::string>> lines;
  for (const auto& [entry, w, count] : missing) {
    std::string what = "'" + entry + "'";
    if (count > 1) what += " (" + std::to_string(count) + " members)";
    lines.emplace_back(w,
                       need + ", and " + what + (count > 1 ? " have" : " has") + " none: " + fix);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) {
    return a.first.line < b.first.line ||
           (a.first.line == b.first.line && a.first.column < b.first.column);
  });
  std::string message;
  for (std::size_t i = 0; i < lines.size() && i < kMaxDiagnostics; ++i) {
    if (i > 0) message += '\n';
    message +=
        Diagnostic{path, lines[i].first.line, lines[i].first.column, lines[i].second}.format();
  }
  if (lines.size() > kMaxDiagnostics) {
    message += "\n" + path + ": and " + std::to_string(lines.size() - kMaxDiagnostics) +
               " more task entries without an estimate";
  }
  return invalid_argument(message);
}

}  // namespace chorus::cli
