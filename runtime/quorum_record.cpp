#include "runtime/quorum_record.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace chorus {
namespace {

void append_string(std::string& out, const std::string& text) {
  out += '"';
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_number(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  out += buf;
}

void append_names(std::string& out, const char* key, const std::vector<QuorumRecord::Member>& m) {
  out += ",\n  \"";
  out += key;
  out += "\": [";
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (i > 0) out += ", ";
    append_string(out, m[i].name);
  }
  out += ']';
}

}  // namespace

std::string quorum_record_json(const QuorumRecord& r) {
  std::string out = "{\n  \"group\": ";
  append_string(out, r.group);
  out += ",\n  \"sweep\": ";
  append_string(out, r.sweep);
  out += ",\n  \"policy\": ";
  append_string(out, r.policy);
  out += ",\n  \"round\": " + std::to_string(r.round);
  out += ",\n  \"n\": " + std::to_string(r.n);
  out += ",\n  \"k\": " + std::to_string(r.target);
  out += ",\n  \"used\": " + std::to_string(r.used.size());
  out += ",\n  \"dropped\": " + std::to_string(r.dropped.size());
  out += ",\n  \"closed_after_s\": ";
  append_number(out, r.closed_after_s);
  append_names(out, "members_used", r.used);
  append_names(out, "members_dropped", r.dropped);
  append_names(out, "members_late", r.late);
  out += ",\n  \"arrivals_s\": {";
  for (std::size_t i = 0; i < r.used.size(); ++i) {
    out += i > 0 ? ", " : "";
    append_string(out, r.used[i].name);
    out += ": ";
    append_number(out, r.used[i].arrived_after_s);
  }
  out += "}\n}\n";
  return out;
}

Status write_quorum_record(const std::string& path, const QuorumRecord& record) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return io_error("cannot create the folder of quorum file " + path + ": " + ec.message());
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << quorum_record_json(record);
    out.flush();
    if (!out) return io_error("cannot write quorum file " + tmp + ": " + std::strerror(errno));
  }
  fs::rename(tmp, target, ec);
  if (ec) return io_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return {};
}

}  // namespace chorus
