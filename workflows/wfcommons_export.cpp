#include "workflows/wfcommons_export.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "workflows/wfcommons_reader.hpp"

namespace chorus {
namespace {

// Workflow task names may not contain '[', ']', '/' (sweep syntax, paths), '{', '}'
// (placeholders) or control characters; WfCommons ids rarely do, but an id that does is
// rewritten with '_' and kept unique.
std::vector<std::string> yaml_names(const WorkflowGraph& graph) {
  std::vector<std::string> names;
  std::unordered_set<std::string> used;
  for (const auto& t : graph.tasks) {
    std::string n = t.name;
    for (char& c : n) {
      if (c == '[' || c == ']' || c == '/' || c == '{' || c == '}' || c == ' ' ||
          std::iscntrl(static_cast<unsigned char>(c))) {
        c = '_';
      }
    }
    std::string candidate = n;
    for (int k = 2; !used.insert(candidate).second; ++k) candidate = n + "_" + std::to_string(k);
    names.push_back(candidate);
  }
  return names;
}

}  // namespace

std::string wfcommons_to_yaml(const WorkflowGraph& graph) {
  const auto names = yaml_names(graph);
  YAML::Emitter out;
  out << YAML::BeginMap;
  // Without a name the loader names the workflow after its file.
  if (!graph.name.empty()) out << YAML::Key << "name" << YAML::Value << graph.name;
  if (!graph.source_path.empty()) {
    out << YAML::Key << "description" << YAML::Value
        << "imported from WfCommons instance " + graph.source_path +
               "; each task sleeps its recorded runtime";
  }
  out << YAML::Key << "tasks" << YAML::Value << YAML::BeginSeq;
  for (const auto& t : graph.tasks) {
    const double seconds = std::chrono::duration<double>(t.estimate).count();
    const auto argv = replay_command(seconds);
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << names[t.id];
    out << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& a : argv) out << YAML::DoubleQuoted << a;
    out << YAML::EndSeq;
    out << YAML::Key << "estimate" << YAML::Value << argv[1] + "s";
    out << YAML::Key << "cores" << YAML::Value << t.per_rank.cores;
    if (t.per_rank.memory_mb > 0) {
      out << YAML::Key << "memory" << YAML::Value << std::to_string(t.per_rank.memory_mb) + "M";
    }
    if (!t.after.empty()) {
      out << YAML::Key << "after" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (TaskId d : t.after) out << names[d];
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Status write_wfcommons_yaml(const WorkflowGraph& graph, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return io_error(path + ": cannot open for writing: " + std::strerror(errno));
  file << wfcommons_to_yaml(graph);
  file.close();
  if (!file) return io_error(path + ": write failed: " + std::strerror(errno));
  return {};
}

}  // namespace chorus
