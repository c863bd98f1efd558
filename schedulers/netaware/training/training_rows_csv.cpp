#include "schedulers/netaware/training/training_rows_csv.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace chorus {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool parse_number(const std::string& text, double& out) {
  if (text.empty() || text == "nan" || text == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno == 0;
}

}  // namespace

Result<std::vector<TrainingRow>> read_training_rows_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return io_error(path + ": cannot open the rows file: " + std::strerror(errno));
  std::string line;
  if (!std::getline(in, line)) return invalid_argument(path + ":1: empty rows file (no header)");
  const std::vector<std::string> header = split_fields(line);
  const auto names = feature_names();
  constexpr int kSeconds = -1;
  constexpr int kRun = -2;
  std::vector<int> column_of(header.size());  // feature index, kSeconds or kRun
  std::vector<bool> have(kFeatureCount, false);
  bool have_seconds = false;
  bool have_run = false;
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::string h = trim(header[c]);
    bool twice = false;
    if (h == "seconds") {
      twice = have_seconds;
      have_seconds = true;
      column_of[c] = kSeconds;
    } else if (h == "run") {
      twice = have_run;
      have_run = true;
      column_of[c] = kRun;
    } else {
      std::size_t f = 0;
      while (f < names.size() && names[f] != h) ++f;
      if (f == names.size()) {
        return invalid_argument(path + ":1: unknown column \"" + h +
                                "\" (the feature names, seconds and run are known)");
      }
      twice = have[f];
      have[f] = true;
      column_of[c] = static_cast<int>(f);
    }
    if (twice) return invalid_argument(path + ":1: column \"" + h + "\" named twice");
  }
  for (std::size_t f = 0; f < names.size(); ++f) {
    if (!have[f]) {
      return invalid_argument(path + ":1: no column for feature \"" + std::string(names[f]) + "\"");
    }
  }
  if (!have_seconds) return invalid_argument(path + ":1: no \"seconds\" column");
  std::vector<TrainingRow> rows;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (trim(line).empty()) continue;
    const std::vector<std::string> fields = split_fields(line);
    const std::string where = path + ":" + std::to_string(n);
    if (fields.size() != header.size()) {
      return invalid_argument(where + ": " + std::to_string(fields.size()) +
                              " fields, the header has " + std::to_string(header.size()));
    }
    TrainingRow row;
    row.run = path;
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const std::string v = trim(fields[c]);
      if (column_of[c] == kRun) {
        row.run = v;
        continue;
      }
      double x = 0;
      if (!parse_number(v, x)) {
        return invalid_argument(where + ": column \"" + trim(header[c]) + "\": \"" + v +
                                "\" is not a number");
      }
      if (column_of[c] == kSeconds) {
        if (!(x > 0) || !std::isfinite(x)) {
          return invalid_argument(where + ": seconds must be positive, got \"" + v + "\"");
        }
        row.seconds = x;
      } else {
        row.features[static_cast<std::size_t>(column_of[c])] = static_cast<float>(x);
      }
    }
    rows.push_back(std::move(row));
  }
  if (in.bad()) return io_error(path + ": read error");
  return rows;
}

void write_training_rows_csv(std::ostream& out, std::span<const TrainingRow> rows) {
  for (std::string_view n : feature_names()) out << n << ',';
  out << "seconds,run\n";
  char buf[40];
  for (const TrainingRow& r : rows) {
    for (float v : r.features) {
      if (!std::isnan(v)) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
        out << buf;
      }
      out << ',';
    }
    std::snprintf(buf, sizeof buf, "%.9g", r.seconds);
    out << buf << ',' << r.run << '\n';
  }
}

}  // namespace chorus
