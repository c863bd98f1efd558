#include "workflows/wfcommons_reader.hpp"
#include "core/text.hpp"
#include "workflows/workflow_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_set>

namespace chorus {
namespace {

using nlohmann::json;

// Bounds of the numeric fields, checked before any conversion (a double out of an integer's range
// converts to an undefined value: `cores: -2147483648`, a negative estimate).
constexpr double kMaxCores = 1048576;
constexpr double kMaxRuntimeSeconds = 1e9;  // core/units' limit of a duration (about 31 years)
constexpr double kMaxBytes = 9007199254740992.0;  // 2^53 (8 PiB): exact in a double and an int64

// What one task looks like once either layout has been read.
struct RawTask {
  std::string id;
  std::string name;
  std::string where;       // its JSON path, "workflow.specification.tasks[3]"
  std::string exec_where;  // where its runtime came from (may equal `where`)
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
  // "<path>: <json path>: message"
  Status fail_at(const std::string& where, const std::string& message) const {
    return invalid_argument(path + ": " + where + ": " + message);
  }
};

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string kind_of(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return "null";
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The number at obj[key], within [lo, hi] (and above lo when `open_low`); nullopt when absent.
// `where` is obj's JSON path.
Result<std::optional<double>> number_in(const json& obj, const char* key, const std::string& where,
                                        double lo, double hi, const std::string& range,
                                        const Reader& rd) {
  const json* v = member(obj, key);
  if (v == nullptr) return std::optional<double>{};
  const std::string at = where + "." + key;
  if (!v->is_number()) return rd.fail_at(at, "must be a number, got " + kind_of(*v));
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    return rd.fail_at(at, number_text(d) + " is out of range (" + range + ")");
  }
  return std::optional<double>{d};
}

// A list of strings (ids), or absent. Anything else is refused, never dropped.
Result<std::vector<std::string>> strings_in(const json& obj, const char* key,
                                            const std::string& where, const Reader& rd) {
  std::vector<std::string> out;
  const json* arr = member(obj, key);
  if (arr == nullptr) return out;
  const std::string at = where + "." + key;
  if (!arr->is_array()) {
    return rd.fail_at(at, "must be a list of ids (strings), got " + kind_of(*arr));
  }
  out.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const json& v = (*arr)[i];
    if (!v.is_string()) {
      return rd.fail_at(at + "[" + std::to_string(i) + "]",
                        "must be an id (a string), got " + kind_of(v));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

Status read_execution_fields(const json& src, const std::string& where, const Reader& rd,
                             RawTask& task) {
  for (const char* key : {"runtimeInSeconds", "runtime"}) {
    auto r = number_in(src, key, where, 0, kMaxRuntimeSeconds, "0..1e9 seconds", rd);
    if (!r.ok()) return r.status();
    if (*r && !task.runtime_s) {
      task.runtime_s = **r;
      task.exec_where = where + "." + key;
    }
  }
  for (const char* key : {"coreCount", "cores"}) {
    auto c = number_in(src, key, where, 1, kMaxCores, "1..1048576", rd);
    if (!c.ok()) return c.status();
    if (*c) {
      task.cores = static_cast<int>(std::ceil(**c));
      break;
    }
  }
  auto mem = number_in(src, "memoryInBytes", where, 0, kMaxBytes, "0..2^53 bytes", rd);
  if (!mem.ok()) return mem.status();
  if (*mem) task.memory_bytes = static_cast<std::int64_t>(**mem);
  return {};
}

// A file's size in bytes, -1 when absent.
Result<std::int64_t> file_size_in(const json& f, const std::string& where, const Reader& rd) {
  for (const char* key : {"sizeInBytes", "size"}) {
    auto size = number_in(f, key, where, 0, kMaxBytes, "0..2^53 bytes", rd);
    if (!size.ok()) return size.status();
    if (*size) return static_cast<std::int64_t>(**size);
  }
  return std::int64_t{-1};
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
    for (std::size_t i = 0; i < files->size(); ++i) {
      const json& f = (*files)[i];
      const std::string where = "workflow.specification.files[" + std::to_string(i) + "]";
      if (const json* id = member(f, "id"); id && id->is_string()) {
        auto size = file_size_in(f, where, rd);
        if (!size.ok()) return size.status();
        file_size[id->get<std::string>()] = *size;
      }
    }
  }
  std::unordered_map<std::string, std::size_t> exec_by_id;
  const json* exec = member(workflow, "execution");
  const json* exec_tasks = exec ? member(*exec, "tasks") : nullptr;
  if (exec_tasks != nullptr && exec_tasks->is_array()) {
    for (std::size_t i = 0; i < exec_tasks->size(); ++i) {
      if (const json* id = member((*exec_tasks)[i], "id"); id && id->is_string()) {
        exec_by_id.emplace(id->get<std::string>(), i);
      }
    }
  }
  for (std::size_t i = 0; i < spec_tasks->size(); ++i) {
    const json& t = (*spec_tasks)[i];
    RawTask task;
    task.where = "workflow.specification.tasks[" + std::to_string(i) + "]";
    const json* id = member(t, "id");
    if (id == nullptr || !id->is_string() || id->get<std::string>().empty()) {
      return rd.fail_at(task.where, "has no 'id'");
    }
    task.id = id->get<std::string>();
    const json* name = member(t, "name");
    task.name = name && name->is_string() ? name->get<std::string>() : task.id;
    task.has_parents = member(t, "parents") != nullptr;
    for (auto [key, out] :
         {std::pair{"parents", &task.parents}, std::pair{"inputFiles", &task.inputs},
          std::pair{"outputFiles", &task.outputs}}) {
      auto list = strings_in(t, key, task.where, rd);
      if (!list.ok()) return list.status();
      *out = std::move(*list);
    }
    task.exec_where = task.where;
    if (auto it = exec_by_id.find(task.id); it != exec_by_id.end()) {
      const std::string where = "workflow.execution.tasks[" + std::to_string(it->second) + "]";
      task.exec_where = where;
      if (Status s = read_execution_fields((*exec_tasks)[it->second], where, rd, task); !s.ok()) {
        return s;
      }
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
    task.where = "workflow.tasks[" + std::to_string(i) + "]";
    task.exec_where = task.where;
    const json* id = member(t, "id");
    const json* name = member(t, "name");
    if (id != nullptr && id->is_string()) task.id = id->get<std::string>();
    if (name != nullptr && name->is_string()) task.name = name->get<std::string>();
    if (task.id.empty()) task.id = task.name;
    if (task.id.empty()) return rd.fail_at(task.where, "has neither 'id' nor 'name'");
    task.has_parents = member(t, "parents") != nullptr;
    auto parents = strings_in(t, "parents", task.where, rd);
    if (!parents.ok()) return parents.status();
    task.parents = std::move(*parents);
    if (const json* files = member(t, "files"); files && files->is_array()) {
      for (std::size_t k = 0; k < files->size(); ++k) {
        const json& f = (*files)[k];
        const json* fname = member(f, "name");
        if (fname == nullptr || !fname->is_string()) continue;
        std::string file = fname->get<std::string>();
        auto size = file_size_in(f, task.where + ".files[" + std::to_string(k) + "]", rd);
        if (!size.ok()) return size.status();
        file_size[file] = *size;
        const json* link = member(f, "link");
        bool output = link && link->is_string() && link->get<std::string>() == "output";
        (output ? task.outputs : task.inputs).push_back(std::move(file));
      }
    }
    if (Status s = read_execution_fields(t, task.where, rd, task); !s.ok()) return s;
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

namespace {

Result<WfCommonsInstance> parse_instance(std::string_view json_text, const std::string& path) {
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
  if (raw.empty()) {
    return rd.fail_at(
        out.schema_version == "1.4" ? "workflow.tasks" : "workflow.specification.tasks",
        "the workflow has no tasks");
  }

  std::unordered_map<std::string, TaskId> by_id;
  std::unordered_map<std::string, TaskId> by_name;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (auto [it, fresh] = by_id.emplace(raw[i].id, static_cast<TaskId>(i)); !fresh) {
      return rd.fail_at(raw[i].where + ".id", "duplicate task id '" + raw[i].id + "' (also " +
                                                  raw[it->second].where + ")");
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
      return rd.fail_at(r.exec_where,
                        "task '" + r.id + "' has no runtimeInSeconds (needed as its estimate)");
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
      for (std::size_t k = 0; k < r.parents.size(); ++k) {
        const std::string& p = r.parents[k];
        TaskId parent = kNoTask;
        if (auto it = by_id.find(p); it != by_id.end()) {
          parent = it->second;
        } else if (auto jt = by_name.find(p); jt != by_name.end()) {
          parent = jt->second;
        } else {
          return rd.fail_at(r.where + ".parents[" + std::to_string(k) + "]",
                            "task '" + r.id + "' names unknown parent '" + p + "'");
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
  if (auto cycle = find_cycle(g); !cycle.empty()) {
    return rd.fail_at(raw[cycle.front()].where + ".parents",
                      "dependency cycle: " + describe_cycle(g, cycle));
  }
  if (Status v = validate_graph(g); !v.ok()) return rd.fail(v.message());
  return out;
}

}  // namespace

Result<WfCommonsInstance> parse_wfcommons(std::string_view json_text, const std::string& path) {
  try {
    return parse_instance(json_text, path);
  } catch (const std::bad_alloc&) {
    // The file size limit keeps traces far inside memory; this is the last line, not a limit.
    return Status(ErrorCode::io_error, path + ": out of memory while reading the trace");
  }
}

Result<WfCommonsInstance> read_wfcommons_file(const std::string& path) {
  auto text = read_workflow_source(path, kMaxWfCommonsFileBytes, "WfCommons trace", "");
  if (!text.ok()) return Status(text.status().code(), path + ": " + text.status().message());
  return parse_wfcommons(*text, path);
}

}  // namespace chorus
