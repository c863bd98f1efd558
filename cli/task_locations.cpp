#include "cli/task_locations.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "workflows/diagnostic.hpp"

namespace chorus::cli {
namespace {

constexpr std::size_t kMaxDiagnostics = 20;

void collect_task_names(const YAML::Node& tasks, std::map<std::string, Where>& out) {
  if (!tasks || !tasks.IsSequence()) return;
  for (const auto& entry : tasks) {
    if (!entry.IsMap()) continue;
    if (entry["repeat"]) {
      collect_task_names(entry["tasks"], out);
      continue;
    }
    const YAML::Node name = entry["name"];
    if (!name || !name.IsScalar()) continue;
    const YAML::Mark m = name.Mark();
    out.emplace(name.Scalar(), Where{m.line + 1, m.column + 1});
  }
}

}  // namespace

std::map<std::string, Where> task_positions(const std::string& path) {
  std::map<std::string, Where> out;
  try {
    collect_task_names(YAML::LoadFile(path)["tasks"], out);
  } catch (const YAML::Exception&) {
    // The file loaded a moment ago; if it cannot be read again the names go unlocated.
  }
  return out;
}

std::string display_path(const std::string& path) {
  std::error_code ec;
  const auto rel = std::filesystem::proximate(path, ec).string();
  return !ec && rel.rfind("..", 0) != 0 ? rel : path;
}

Status locate_missing_estimates(const WorkflowGraph& graph, const std::string& path,
                                const std::function<bool(const TaskSpec&)>& lacking,
                                const std::string& need, const std::string& fix) {
  // Per task entry (a sweep's members share one): how many members lack it.
  std::vector<std::pair<std::string, std::size_t>> missing;
  std::map<std::string, std::size_t> index;
  for (const auto& t : graph.tasks) {
    if (!lacking(t)) continue;
    const std::string entry = t.name.substr(0, t.name.find('['));
    auto [it, added] = index.emplace(entry, missing.size());
    if (added) missing.emplace_back(entry, 0);
    ++missing[it->second].second;
  }
  if (missing.empty()) return {};
  const auto where = path.empty() ? std::map<std::string, Where>{} : task_positions(path);
  std::vector<std::pair<Where, std::string>> lines;
  for (const auto& [entry, count] : missing) {
    const auto it = where.find(entry);
    const Where w = it == where.end() ? Where{} : it->second;
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
