#include "schedulers/sim/workload_io.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/text.hpp"
#include "schedulers/sim/json_text.hpp"

namespace chorus::sim {
namespace {

// Members in file order, so that the first offending key is the one reported.
using Json = nlohmann::ordered_json;

// Finds the token a SAX parse stops at; used only for the errors whose exception carries no
// offset (nlohmann's out_of_range 406, a number too large for a double).
class ErrorLocator final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  // `position` is the number of bytes read, the whole offending token included.
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception&) override {
    token_offset_ = position - std::min(position, last_token.size());
    return false;
  }
  std::size_t token_offset() const { return token_offset_; }

 private:
  std::size_t token_offset_ = 0;
};

// Errors: invalid_argument "<source>:<line>:<col>: <nlohmann's reason>".
Result<Json> parse_json(std::string_view text, const std::string& source) {
  std::size_t offset = 0;  // 0-based, of the offending byte or token
  std::string what;
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte counts the bytes read, the offending one included.
    offset = e.byte > 0 ? e.byte - 1 : 0;
    what = e.what();
  } catch (const Json::exception& e) {
    ErrorLocator locator;
    Json::sax_parse(text, &locator);
    offset = locator.token_offset();
    what = e.what();
  }
  // nlohmann's text is "[json.exception.<kind>.<id>] [parse error at line L, column C: ]why".
  std::size_t cut = what.find("] ");
  cut = cut == std::string::npos ? 0 : cut + 2;
  if (what.compare(cut, 11, "parse error") == 0) {
    std::size_t colon = what.find(": ", cut);
    cut = colon == std::string::npos ? cut : colon + 2;
  }
  auto [line, column] = line_column_of(text, offset);
  return invalid_argument(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                          ": " + what.substr(cut));
}

Result<SizeClass> parse_size(std::string_view s) {
  if (s == "small") return SizeClass::small;
  if (s == "large") return SizeClass::large;
  if (s.empty() || s == "unknown") return SizeClass::unknown;
  return invalid_argument("size must be 'small' or 'large', got '" + std::string(s) + "'");
}

Status unknown_key(const std::string& where, const std::string& key,
                   const std::vector<std::string>& known) {
  return invalid_argument(where + ": unknown key '" + key + "'" + did_you_mean(key, known) +
                          "; known: " + join(known));
}

std::string fmt(double d) {
  return json_number(d);
}

// A number for messages: "1e+300", "inf", "-2".
std::string shown(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

// Runtimes (> 0) and arrivals (>= 0) are seconds within the simulator's bound.
Status check_seconds(double s, const std::string& where, bool positive) {
  if (std::isfinite(s) && (positive ? s > 0 : s >= 0) && s <= kMaxSimSeconds) return {};
  return invalid_argument(
      where + ": " + shown(s) + " s is out of range (" +
      (positive ? "runtimes are more than 0 and at most " : "arrivals are 0 to ") +
      shown(kMaxSimSeconds) + " s)");
}

Result<double> number_at(const Json& v, const std::string& where) {
  if (!v.is_number()) return invalid_argument(where + " must be a number");
  return v.get<double>();
}

Result<int> int_at(const Json& v, const std::string& where) {
  double d = v.is_number() ? v.get<double>() : 0.5;
  if (d != std::floor(d) || std::abs(d) > 1e9)
    return invalid_argument(where + " must be an integer");
  return static_cast<int>(d);
}

// An MPI task's shape, read: `ranks` (1 to kMaxSimCores) and `nodes` (1 to its ranks, and only
// with ranks). `where` names the task; `at` says how its fields are named there (".ranks" in JSON,
// ": ranks" in CSV).
Status check_mpi_shape(const SimTask& task, const std::string& where, bool has_nodes,
                       const std::string& ranks_at, const std::string& nodes_at) {
  if (task.ranks == 0 && !has_nodes) return {};
  if (task.ranks < 0 || task.ranks > kMaxSimCores) {
    return invalid_argument(where + ranks_at + ": " + std::to_string(task.ranks) +
                            " is out of range (1 to " + std::to_string(kMaxSimCores) + ")");
  }
  if (!has_nodes) return {};
  if (task.ranks == 0) {
    return invalid_argument(where + nodes_at +
                            " needs ranks (only an MPI task spreads over nodes)");
  }
  if (task.nodes < 1 || task.nodes > task.ranks) {
    return invalid_argument(where + nodes_at + ": " + std::to_string(task.nodes) +
                            " is out of range (1 to its " + std::to_string(task.ranks) +
                            " ranks: every node needs at least one rank)");
  }
  return {};
}

Status read_task(const Json& v, const std::string& where, SimTask& task) {
  static const std::vector<std::string> keys = {"runtime", "cores", "after", "ranks", "nodes"};
  if (!v.is_object()) return invalid_argument(where + " must be an object");
  bool has_runtime = false;
  bool has_nodes = false;
  for (const auto& [k, val] : v.items()) {
    if (k == "ranks" || k == "nodes") {
      auto n = int_at(val, where + "." + k);
      if (!n.ok()) return n.status();
      if (k == "ranks") {
        if (*n < 1) {
          return invalid_argument(where + ".ranks: " + std::to_string(*n) +
                                  " is out of range (1 to " + std::to_string(kMaxSimCores) + ")");
        }
        task.ranks = *n;
      } else {
        task.nodes = *n;
        has_nodes = true;
      }
    } else if (k == "runtime") {
      auto r = number_at(val, where + ".runtime");
      if (!r.ok()) return r.status();
      if (Status s = check_seconds(*r, where + ".runtime", true); !s.ok()) return s;
      task.runtime_s = *r;
      has_runtime = true;
    } else if (k == "cores") {
      auto c = int_at(val, where + ".cores");
      if (!c.ok()) return c.status();
      if (*c < 1 || *c > kMaxSimCores) {
        return invalid_argument(where + ".cores: " + std::to_string(*c) +
                                " is out of range (1 to " + std::to_string(kMaxSimCores) + ")");
      }
      task.cores = *c;
    } else if (k == "after") {
      if (!val.is_array())
        return invalid_argument(where + ".after must be an array of task indices");
      for (const auto& a : val) {
        auto i = int_at(a, where + ".after[]");
        if (!i.ok()) return i.status();
        if (*i < 0) return invalid_argument(where + ".after has a negative index");
        task.after.push_back(static_cast<std::uint32_t>(*i));
      }
    } else {
      return unknown_key(where, k, keys);
    }
  }
  if (!has_runtime) return invalid_argument(where + " has no runtime (add \"runtime\": seconds)");
  return check_mpi_shape(task, where, has_nodes, ".ranks", ".nodes");
}

// `room`: how many tasks the workload may still take (kMaxSimTasks in all).
Status read_job(const Json& v, const std::string& where, SimJob& job, std::uint64_t room) {
  static const std::vector<std::string> keys = {
      "id", "user", "class", "size", "arrival", "after_previous", "divisible", "tasks", "weight"};
  if (!v.is_object()) return invalid_argument(where + " must be an object");
  bool has_arrival = false;
  for (const auto& [k, val] : v.items()) {
    std::string at = where + "." + k;
    if (k == "id" || k == "user" || k == "class" || k == "size") {
      if (!val.is_string()) return invalid_argument(at + " must be a string");
      const auto& text = val.get_ref<const std::string&>();
      if (k == "id") job.id = text;
      if (k == "user") job.user = text;
      if (k == "class") job.job_class = text;
      if (k == "size") {
        auto s = parse_size(text);
        if (!s.ok()) return invalid_argument(at + ": " + s.status().message());
        job.size = *s;
      }
    } else if (k == "arrival") {
      auto a = number_at(val, at);
      if (!a.ok()) return a.status();
      if (Status s = check_seconds(*a, at, false); !s.ok()) return s;
      job.arrival_s = *a;
      has_arrival = true;
    } else if (k == "weight") {
      auto w = number_at(val, at);
      if (!w.ok()) return w.status();
      if (!(*w > 0) || !std::isfinite(*w)) {
        return invalid_argument(at +
                                " must be a positive number (a job's share of its user's), "
                                "got " +
                                shown(*w));
      }
      job.weight = *w;
    } else if (k == "after_previous" || k == "divisible") {
      if (!val.is_boolean()) return invalid_argument(at + " must be true or false");
      (k == "divisible" ? job.divisible : job.after_previous) = val.get<bool>();
    } else if (k == "tasks") {
      if (val.is_array()) {
        if (val.size() > room) {
          return invalid_argument(at + ": " + std::to_string(val.size()) + " tasks would give " +
                                  "the workload more than " + std::to_string(kMaxSimTasks) +
                                  " tasks");
        }
        for (std::size_t i = 0; i < val.size(); ++i) {
          SimTask t;
          if (Status s = read_task(val[i], at + "[" + std::to_string(i) + "]", t); !s.ok()) {
            return s;
          }
          job.tasks.push_back(std::move(t));
        }
      } else if (val.is_object() && val.contains("count")) {
        auto n = int_at(val["count"], at + ".count");
        if (!n.ok()) return n.status();
        if (*n <= 0 || *n > 10000000) return invalid_argument(at + ".count must be 1..10000000");
        if (static_cast<std::uint64_t>(*n) > room) {
          return invalid_argument(at + ".count: " + std::to_string(*n) + " tasks would give the " +
                                  "workload more than " + std::to_string(kMaxSimTasks) + " tasks");
        }
        Json rest = val;
        rest.erase("count");
        SimTask t;
        if (Status s = read_task(rest, at, t); !s.ok()) return s;
        if (!t.after.empty()) return invalid_argument(at + ": repeated tasks cannot have 'after'");
        job.tasks.assign(static_cast<std::size_t>(*n), t);
      } else {
        return invalid_argument(at +
                                " must be an array of tasks or {\"count\": n, \"runtime\": s}");
      }
    } else {
      return unknown_key(where, k, keys);
    }
  }
  if (job.id.empty()) return invalid_argument(where + " has no id");
  if (job.user.empty()) return invalid_argument(where + " (job '" + job.id + "') has no user");
  if (!has_arrival) return invalid_argument(where + " (job '" + job.id + "') has no arrival");
  return {};
}

// One CSV line split into fields (RFC 4180 quoting: a field that starts with '"' ends at the next
// lone '"', and '""' inside it is one quote). Blanks around fields are dropped. `where` is
// "<source>:<line>"; `header` names the columns for messages (empty while reading the header).
Result<std::vector<std::string>> split_csv_line(std::string_view line, const std::string& where,
                                                const std::vector<std::string>& header) {
  std::vector<std::string> out;
  auto column = [&](std::size_t i) {
    return i < header.size() ? " (column '" + header[i] + "')" : std::string();
  };
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && blank(line[i])) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      const std::size_t open = i++;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field += line[i++];
      }
      if (!closed) {
        return invalid_argument(where + ":" + std::to_string(open + 1) +
                                ": unterminated quote in field " + std::to_string(out.size() + 1) +
                                column(out.size()) + " (a quoted field ends on its own line)");
      }
      while (i < line.size() && blank(line[i])) ++i;
      if (i < line.size() && line[i] != ',') {
        return invalid_argument(where + ":" + std::to_string(i + 1) + ": text after the closing " +
                                "quote of field " + std::to_string(out.size() + 1) +
                                column(out.size()) + " (write \"\" for a quote inside it)");
      }
    } else {
      const std::size_t comma = std::min(line.find(',', i), line.size());
      std::string_view f = line.substr(i, comma - i);
      while (!f.empty() && blank(f.back())) f.remove_suffix(1);
      field = std::string(f);
      i = comma;
    }
    out.push_back(std::move(field));
    if (i >= line.size()) return out;
    ++i;  // the comma
  }
}

Result<double> csv_number(std::string_view f, const std::string& where) {
  double d = 0;
  auto r = std::from_chars(f.data(), f.data() + f.size(), d);
  if (f.empty() || r.ec != std::errc{} || r.ptr != f.data() + f.size()) {
    return invalid_argument(where + ": '" + std::string(f) + "' is not a number");
  }
  return d;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Result<Workload> read_workload_json(std::string_view text, const std::string& source) {
  auto doc = parse_json(text, source);
  if (!doc.ok()) return doc.status();
  Workload w;
  const Json* jobs = &*doc;
  if (doc->is_object()) {
    static const std::vector<std::string> keys = {"name", "jobs"};
    for (const auto& [k, v] : doc->items()) {
      if (k == "name") {
        if (!v.is_string()) return invalid_argument(source + ": \"name\" must be a string");
        w.name = v.get<std::string>();
      } else if (k != "jobs") {
        return unknown_key(source, k, keys);
      }
    }
    auto found = doc->find("jobs");
    if (found == doc->end()) return invalid_argument(source + ": no \"jobs\" array");
    jobs = &*found;
  }
  if (!jobs->is_array()) return invalid_argument(source + ": \"jobs\" must be an array");
  std::uint64_t tasks = 0;
  for (std::size_t i = 0; i < jobs->size(); ++i) {
    SimJob job;
    const std::string where = source + ": jobs[" + std::to_string(i) + "]";
    if (Status s = read_job((*jobs)[i], where, job, kMaxSimTasks - tasks); !s.ok()) return s;
    tasks += job.tasks.size();
    w.jobs.push_back(std::move(job));
  }
  if (Status s = validate_workload(w); !s.ok())
    return invalid_argument(source + ": " + s.message());
  return w;
}

Result<Workload> read_workload_csv(std::string_view text, const std::string& source) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    auto [line, column] = line_column_of(text, nul);
    return invalid_argument(source + ":" + std::to_string(line) + ":" + std::to_string(column) +
                            ": a NUL byte (offset " + std::to_string(nul) +
                            "); a workload CSV is text");
  }
  Workload w;
  std::unordered_map<std::string, std::size_t> job_index;
  std::vector<std::string> header;
  int col_job = -1, col_user = -1, col_arrival = -1, col_runtime = -1, col_cores = -1,
      col_class = -1, col_size = -1, col_divisible = -1, col_weight = -1, col_ranks = -1,
      col_nodes = -1;
  std::size_t line_no = 0, pos = 0;
  std::uint64_t rows = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == text.npos ? text.npos : nl - pos);
    pos = nl == text.npos ? text.size() : nl + 1;
    ++line_no;
    std::string where = source + ":" + std::to_string(line_no);
    if (line.empty() || line == "\r" || line.front() == '#') continue;
    auto split = split_csv_line(line, where, header);
    if (!split.ok()) return split.status();
    std::vector<std::string>& fields = *split;
    if (header.empty()) {
      header = fields;
      static const std::vector<std::string> known = {"job",    "user",  "arrival", "runtime",
                                                     "cores",  "class", "size",    "divisible",
                                                     "weight", "ranks", "nodes"};
      std::unordered_map<std::string, std::size_t> seen;
      for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string& name = header[i];
        if (auto [first, fresh] = seen.emplace(name, i); !fresh) {
          return invalid_argument(where + ": column '" + name + "' is named twice (columns " +
                                  std::to_string(first->second + 1) + " and " +
                                  std::to_string(i + 1) + ")");
        }
        int idx = static_cast<int>(i);
        if (name == "job")
          col_job = idx;
        else if (name == "user")
          col_user = idx;
        else if (name == "arrival")
          col_arrival = idx;
        else if (name == "runtime")
          col_runtime = idx;
        else if (name == "cores")
          col_cores = idx;
        else if (name == "class")
          col_class = idx;
        else if (name == "size")
          col_size = idx;
        else if (name == "divisible")
          col_divisible = idx;
        else if (name == "weight")
          col_weight = idx;
        else if (name == "ranks")
          col_ranks = idx;
        else if (name == "nodes")
          col_nodes = idx;
        else
          return unknown_key(where, name, known);
      }
      if (col_job < 0 || col_user < 0 || col_arrival < 0 || col_runtime < 0) {
        return invalid_argument(
            where +
            ": the header must name the columns job, user, arrival "
            "and runtime (optional: cores, class, size, divisible, weight, ranks, nodes)");
      }
      continue;
    }
    if (fields.size() != header.size()) {
      return invalid_argument(where + ": " + std::to_string(fields.size()) +
                              " fields, the header has " + std::to_string(header.size()));
    }
    auto field = [&](int col) -> const std::string& {
      return fields[static_cast<std::size_t>(col)];
    };
    const std::string& id = field(col_job);
    auto arrival = csv_number(field(col_arrival), where + ": arrival");
    if (!arrival.ok()) return arrival.status();
    if (Status s = check_seconds(*arrival, where + ": arrival", false); !s.ok()) return s;
    auto runtime = csv_number(field(col_runtime), where + ": runtime");
    if (!runtime.ok()) return runtime.status();
    if (Status s = check_seconds(*runtime, where + ": runtime", true); !s.ok()) return s;
    SimTask task{*runtime, 1, {}, {}};
    if (col_cores >= 0) {
      auto c = csv_number(field(col_cores), where + ": cores");
      if (!c.ok()) return c.status();
      if (!(*c >= 1 && *c <= kMaxSimCores) || *c != std::floor(*c)) {
        return invalid_argument(where + ": cores: " + shown(*c) +
                                " is not a whole number of cores from 1 to " +
                                std::to_string(kMaxSimCores));
      }
      task.cores = static_cast<int>(*c);
    }
    // ranks and nodes: an MPI task's shape; an empty field (or no column) is a plain task.
    auto whole = [&](int col, const char* name, int& out) -> Status {
      if (col < 0 || field(col).empty()) return {};
      auto n = csv_number(field(col), where + ": " + name);
      if (!n.ok()) return n.status();
      if (*n != std::floor(*n) || !(*n >= 1 && *n <= kMaxSimCores)) {
        return invalid_argument(where + ": " + name + ": " + shown(*n) +
                                " is not a whole number from 1 to " + std::to_string(kMaxSimCores));
      }
      out = static_cast<int>(*n);
      return {};
    };
    if (Status s = whole(col_ranks, "ranks", task.ranks); !s.ok()) return s;
    if (Status s = whole(col_nodes, "nodes", task.nodes); !s.ok()) return s;
    if (Status s = check_mpi_shape(task, where, task.nodes > 0, ": ranks", ": nodes"); !s.ok())
      return s;
    auto [it, added] = job_index.emplace(id, w.jobs.size());
    if (added) {
      SimJob job;
      job.id = id;
      job.user = field(col_user);
      job.arrival_s = *arrival;
      if (col_class >= 0) job.job_class = field(col_class);
      if (col_size >= 0) {
        auto s = parse_size(field(col_size));
        if (!s.ok()) return invalid_argument(where + ": " + s.status().message());
        job.size = *s;
      }
      if (col_divisible >= 0) {
        const std::string& d = field(col_divisible);
        job.divisible = d == "true" || d == "1" || d == "yes";
      }
      if (col_weight >= 0) {
        auto wt = csv_number(field(col_weight), where + ": weight");
        if (!wt.ok()) return wt.status();
        if (!(*wt > 0) || !std::isfinite(*wt)) {
          return invalid_argument(where + ": job '" + id + "' has weight " + shown(*wt) +
                                  "; a job's weight must be a positive number");
        }
        job.weight = *wt;
      }
      if (job.user.empty()) return invalid_argument(where + ": job '" + id + "' has no user");
      w.jobs.push_back(std::move(job));
    } else if (w.jobs[it->second].arrival_s != *arrival) {
      return invalid_argument(where + ": job '" + id + "' arrives at " + fmt(*arrival) +
                              " here but at " + fmt(w.jobs[it->second].arrival_s) +
                              " on an earlier row");
    }
    if (++rows > kMaxSimTasks) {
      return invalid_argument(where + ": more than " + std::to_string(kMaxSimTasks) +
                              " tasks in the workload");
    }
    w.jobs[it->second].tasks.push_back(task);
  }
  if (header.empty()) return invalid_argument(source + ":1: empty CSV (no header)");
  if (Status s = validate_workload(w); !s.ok())
    return invalid_argument(source + ": " + s.message());
  return w;
}

Result<Workload> load_workload_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot read workload '" + path + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  Result<Workload> w =
      ends_with(".csv") ? read_workload_csv(text, path)
      : ends_with(".json")
          ? read_workload_json(text, path)
          : Result<Workload>(invalid_argument("workload '" + path +
                                              "': unknown format (use a .json or .csv file)"));
  if (w.ok() && w->name.empty()) w->name = path;
  return w;
}

std::string records_csv(const std::vector<SimResult>& runs) {
  std::string out =
      "policy,job,user,class,size,arrival_s,start_s,finish_s,response_s,work_core_s,alone_s,"
      "slowdown,"
      "tasks\n";
  for (const auto& run : runs) {
    for (const auto& j : run.jobs) {
      out += csv_field(run.policy) + "," + csv_field(j.id) + "," + csv_field(j.user) + "," +
             csv_field(j.job_class) + "," + to_string(j.size) + "," + fmt(j.arrival_s) + "," +
             fmt(j.start_s) + "," + fmt(j.finish_s) + "," + fmt(j.response_s()) + "," +
             fmt(j.work) + "," + fmt(j.alone_s) + "," +
             fmt(j.alone_s > 0 ? j.response_s() / j.alone_s : 1) + "," + std::to_string(j.tasks) +
             "\n";
    }
  }
  return out;
}

Result<std::string> workload_json(const Workload& w) {
  // %.17g: every double reads back to itself (the records' 10 digits would move runtimes).
  auto exact = [](double d) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return std::string(buf);
  };
  std::string out = "{\"name\": " + json_quote(w.name) + ", \"jobs\": [";
  for (std::size_t ji = 0; ji < w.jobs.size(); ++ji) {
    const SimJob& j = w.jobs[ji];
    out += ji == 0 ? "\n" : ",\n";
    out += "{\"id\": " + json_quote(j.id) + ", \"user\": " + json_quote(j.user);
    if (!j.job_class.empty()) out += ", \"class\": " + json_quote(j.job_class);
    if (j.size != SizeClass::unknown) out += ", \"size\": " + json_quote(to_string(j.size));
    out += ", \"arrival\": " + exact(j.arrival_s);
    if (j.after_previous) out += ", \"after_previous\": true";
    if (j.divisible) out += ", \"divisible\": true";
    if (j.weight != 1) out += ", \"weight\": " + exact(j.weight);
    out += ", \"tasks\": [";
    for (std::size_t ti = 0; ti < j.tasks.size(); ++ti) {
      const SimTask& t = j.tasks[ti];
      if (!t.after_other.empty()) {
        return invalid_argument("job '" + j.id +
                                "': a task waits for another job's, which a JSON workload "
                                "cannot say");
      }
      if (!t.data.empty()) {
        return invalid_argument("job '" + j.id +
                                "': a task moves data, which a JSON workload cannot say");
      }
      out += ti == 0 ? "" : ", ";
      out += "{\"runtime\": " + exact(t.runtime_s);
      if (t.cores != 1) out += ", \"cores\": " + std::to_string(t.cores);
      if (!t.after.empty()) {
        out += ", \"after\": [";
        for (std::size_t a = 0; a < t.after.size(); ++a)
          out += (a ? ", " : "") + std::to_string(t.after[a]);
        out += "]";
      }
      if (t.ranks > 0) out += ", \"ranks\": " + std::to_string(t.ranks);
      if (t.nodes > 0) out += ", \"nodes\": " + std::to_string(t.nodes);
      out += "}";
    }
    out += "]}";
  }
  return out + "\n]}\n";
}

std::string records_json(const std::vector<SimResult>& runs) {
  std::string out = "[";
  bool first = true;
  for (const auto& run : runs) {
    for (const auto& j : run.jobs) {
      out += first ? "\n" : ",\n";
      first = false;
      out += "{\"policy\": " + json_quote(run.policy) + ", \"job\": " + json_quote(j.id) +
             ", \"user\": " + json_quote(j.user) + ", \"class\": " + json_quote(j.job_class) +
             ", \"size\": " + json_quote(to_string(j.size)) +
             ", \"arrival_s\": " + fmt(j.arrival_s) + ", \"start_s\": " + fmt(j.start_s) +
             ", \"finish_s\": " + fmt(j.finish_s) + ", \"response_s\": " + fmt(j.response_s()) +
             ", \"work_core_s\": " + fmt(j.work) + ", \"alone_s\": " + fmt(j.alone_s) +
             ", \"tasks\": " + std::to_string(j.tasks) + "}";
    }
  }
  return out + "\n]\n";
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return io_error("cannot write '" + path + "': " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return io_error("cannot write '" + path + "': " + std::strerror(errno));
  return {};
}

}  // namespace chorus::sim
