#include "workflows/wfcommons_reader.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace chorus {
namespace {

using nlohmann::json;

// What one task looks like once either layout has been read.
struct RawTask {
  std::string id;
  std::string name;
  bool has_parents = false;
  std::vector<std::string> parents;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::optional<double> runtime_s;
  int cores = 1;
  std::int64_t memory_bytes = 0;
};

struct Reader {
  const std::string& path;

  Status fail(const std::string& message) const { return invalid_argument(path + ": " + message); }
};

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number_of(const json& obj, const char* key) {
  const json* v = member(obj, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::vector<std::string> strings_of(const json* arr) {
  std::vector<std::string> out;
  if (arr == nullptr || !arr->is_array()) return out;
  for (const auto& v : *arr) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

void read_execution_fields(const json& src, RawTask& task) {
  task.runtime_s = number_of(src, "runtimeInSeconds");
  if (!task.runtime_s) task.runtime_s = number_of(src, "runtime");
  auto cores = number_of(src, "coreCount");
  if (!cores) cores = number_of(src, "cores");
  if (cores && *cores >= 1) task.cores = static_cast<int>(std::ceil(*cores));
  if (auto mem = number_of(src, "memoryInBytes"))
    task.memory_bytes = static_cast<std::int64_t>(*mem);
}

// WfFormat 1.5: specification (structure, files) and execution (runtimes) are separate lists.
Status read_v15(const json& workflow, const Reader& rd, std::vector<RawTask>& tasks,
                std::unordered_map<std::string, std::int64_t>& file_size) {
  const json* spec = member(workflow, "specification");
  const json* spec_tasks = spec ? member(*spec, "tasks") : nullptr;
  if (spec_tasks == nullptr || !spec_tasks->is_array()) {
    return rd.fail("missing 'workflow.specification.tasks' (required by WfFormat 1.5)");
  }
  if (const json* files = member(*spec, "files"); files && files->is_array()) {
    for (const auto& f : *files) {
      if (const json* id = member(f, "id"); id && id->is_string()) {
        auto size = number_of(f, "sizeInBytes");
        file_size[id->get<std::string>()] = size ? static_cast<std::int64_t>(*size) : -1;
      }
    }
  }
  std::unordered_map<std::string, const json*> exec_by_id;
  const json* exec = member(workflow, "execution");
  if (const json* et = exec ? member(*exec, "tasks") : nullptr; et && et->is_array()) {
    for (const auto& t : *et) {
      if (const json* id = member(t, "id"); id && id->is_string()) {
        exec_by_id[id->get<std::string>()] = &t;
      }
    }
  }
  for (std::size_t i = 0; i < spec_tasks->size(); ++i) {
    const json& t = (*spec_tasks)[i];
    RawTask task;
    const json* id = member(t, "id");
    if (id == nullptr || !id->is_string() || id->get<std::string>().empty()) {
      return rd.fail("workflow.specification.tasks[" + std::to_string(i) + "] has no 'id'");
    }
    task.id = id->get<std::string>();
    const json* name = member(t, "name");
    task.name = name && name->is_string() ? name->get<std::string>() : task.id;
    task.has_parents = member(t, "parents") != nullptr;
    task.parents = strings_of(member(t, "parents"));
    task.inputs = strings_of(member(t, "inputFiles"));
    task.outputs = strings_of(member(t, "outputFiles"));
    if (auto it = exec_by_id.find(task.id); it != exec_by_id.end()) {
      read_execution_fields(*it->second, task);
    }
    tasks.push_back(std::move(task));
  }
  return {};
}

// WfFormat 1.4: one task list; files are embedded per task with a link direction.
Status read_v14(const json& workflow, const Reader& rd, std::vector<RawTask>& tasks,
                std::unordered_map<std::string, std::int64_t>& file_size) {
  const json* list = member(workflow, "tasks");
  if (list == nullptr || !list->is_array()) {
    return rd.fail("missing 'workflow.tasks' (required by WfFormat 1.4)");
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    RawTask task;
    const json* id = member(t, "id");
    const json* name = member(t, "name");
    if (id != nullptr && id->is_string()) task.id = id->get<std::string>();
    if (name != nullptr && name->is_string()) task.name = name->get<std::string>();
    if (task.id.empty()) task.id = task.name;
    if (task.id.empty()) {
      return rd.fail("workflow.tasks[" + std::to_string(i) + "] has neither 'id' nor 'name'");
    }
    task.has_parents = member(t, "parents") != nullptr;
    task.parents = strings_of(member(t, "parents"));
    if (const json* files = member(t, "files"); files && files->is_array()) {
      for (const auto& f : *files) {
        const json* fname = member(f, "name");
        if (fname == nullptr || !fname->is_string()) continue;
        std::string file = fname->get<std::string>();
        auto size = number_of(f, "sizeInBytes");
        if (!size) size = number_of(f, "size");
        file_size[file] = size ? static_cast<std::int64_t>(*size) : -1;
        const json* link = member(f, "link");
        bool output = link && link->is_string() && link->get<std::string>() == "output";
        (output ? task.outputs : task.inputs).push_back(std::move(file));
      }
    }
    read_execution_fields(t, task);
    tasks.push_back(std::move(task));
  }
  return {};
}

std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  std::string out = buf;
  while (!out.empty() && out.back() == '0') out.pop_back();
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out.empty() ? "0" : out;
}

}  // namespace

std::vector<std::string> replay_command(double runtime_s) {
  return {"sleep", format_seconds(runtime_s)};
}

Result<WfCommonsInstance> parse_wfcommons(std::string_view json_text, const std::string& path) {
  Reader rd{path};
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    auto [line, column] = line_column_of(json_text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: why".
    auto colon = what.find(": ", what.find("parse error"));
    std::string why = colon == std::string::npos ? what : what.substr(colon + 2);
    return invalid_argument(path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                            ": invalid JSON at byte " + std::to_string(e.byte) + ": " + why);
  } catch (const json::exception& e) {
    // e.g. out_of_range.406 for a number such as 1e999, which carries no position.
    std::string what = e.what();
    auto close = what.find("] ");
    return invalid_argument(
        path + ": invalid JSON: " + (close == std::string::npos ? what : what.substr(close + 2)));
  }
  if (!doc.is_object()) return rd.fail("not a WfCommons instance (the top level is not an object)");

  WfCommonsInstance out;
  const json* version = member(doc, "schemaVersion");
  if (version == nullptr || !version->is_string()) {
    return rd.fail("no 'schemaVersion' (a WfCommons instance names its WfFormat version)");
  }
  out.schema_version = version->get<std::string>();
  const json* workflow = member(doc, "workflow");
  if (workflow == nullptr || !workflow->is_object()) return rd.fail("missing 'workflow' object");

  std::vector<RawTask> raw;
  Status st;
  if (out.schema_version == "1.5") {
    st = read_v15(*workflow, rd, raw, out.file_size);
  } else if (out.schema_version == "1.4") {
    st = read_v14(*workflow, rd, raw, out.file_size);
  } else {
    return rd.fail("schema version '" + out.schema_version +
                   "' is not supported (Chorus reads WfFormat 1.4 and 1.5)");
  }
  if (!st.ok()) return st;
  if (raw.empty()) return rd.fail("the workflow has no tasks");

  std::unordered_map<std::string, TaskId> by_id;
  std::unordered_map<std::string, TaskId> by_name;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (!by_id.emplace(raw[i].id, static_cast<TaskId>(i)).second) {
      return rd.fail("duplicate task id '" + raw[i].id + "'");
    }
    by_name.emplace(raw[i].name, static_cast<TaskId>(i));
  }
  std::unordered_map<std::string, TaskId> producer;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    for (const auto& f : raw[i].outputs) producer.emplace(f, static_cast<TaskId>(i));
  }

  WorkflowGraph& g = out.graph;
  g.name = member(doc, "name") && member(doc, "name")->is_string()
               ? member(doc, "name")->get<std::string>()
               : path;
  g.source_path = path;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    RawTask& r = raw[i];
    if (!r.runtime_s) {
      return rd.fail("task '" + r.id + "' has no runtimeInSeconds (needed as its estimate)");
    }
    if (*r.runtime_s < 0 || !std::isfinite(*r.runtime_s)) {
      return rd.fail("task '" + r.id + "' has a negative runtime");
    }
    TaskSpec spec;
    spec.name = r.id;
    spec.per_rank.cores = r.cores;
    spec.per_rank.memory_mb = (r.memory_bytes + (1 << 20) - 1) >> 20;
    spec.estimate = Duration(static_cast<std::int64_t>(std::llround(*r.runtime_s * 1e9)));
    spec.cmd.argv = replay_command(*r.runtime_s);
    spec.inputs = r.inputs;
    spec.outputs = r.outputs;
    std::unordered_set<TaskId> seen;
    if (r.has_parents) {
      for (const auto& p : r.parents) {
        TaskId parent = kNoTask;
        if (auto it = by_id.find(p); it != by_id.end()) {
          parent = it->second;
        } else if (auto jt = by_name.find(p); jt != by_name.end()) {
          parent = jt->second;
        } else {
          return rd.fail("task '" + r.id + "' names unknown parent '" + p + "'");
        }
        if (seen.insert(parent).second) spec.after.push_back(parent);
      }
    } else {
      for (const auto& f : r.inputs) {
        auto it = producer.find(f);
        if (it != producer.end() && it->second != i && seen.insert(it->second).second) {
          spec.after.push_back(it->second);
        }
      }
    }
    out.edge_count += spec.after.size();
    g.add(std::move(spec));
  }
  if (Status v = validate_graph(g); !v.ok()) return rd.fail(v.message());
  return out;
}

Result<WfCommonsInstance> read_wfcommons_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open the file for reading");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return io_error(path + ": read error");
  return parse_wfcommons(buf.str(), path);
}

}  // namespace chorus
