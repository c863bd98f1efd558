// DiagnosticList: the problems found in one workflow file, turned into one Status at the end.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/status.hpp"
#include "workflows/diagnostic.hpp"

namespace chorus {

// A 1-based place in a file; 0 means unknown (the whole file, or the whole line).
struct Position {
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
};

class DiagnosticList {
 public:
  // At most this many lines in the Status message; when there are more problems the last line
  // says how many were left out.
  static constexpr std::size_t kMaxShown = 20;

  explicit DiagnosticList(std::string path) : path_(std::move(path)) {}

  // Identical diagnostics (same place, same text) are kept once: a problem in an inherited
  // value is found once per task that inherits it but reported once.
  void add(Position at, std::string message);
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size() + dropped_; }
  // Calls to add(), duplicates included: compare before and after a step to see if it failed.
  std::size_t reports() const { return reports_; }
  const std::vector<Diagnostic>& items() const { return items_; }
  const std::string& path() const { return path_; }
  // The text being read, for positions yaml-cpp does not give (an empty list item's '-'). It
  // must outlive the list; empty when unknown.
  void set_source(std::string_view text) { source_ = text; }
  std::string_view source() const { return source_; }

  // invalid_argument, one diagnostic per line in file order (the order of the phase that found
  // them: the loader stops after the first phase that reports anything). Requires !empty().
  Status to_status() const;

 private:
  // Bounds memory on pathological files (a million broken tasks); only kMaxShown are printed.
  static constexpr std::size_t kMaxKept = 10'000;

  std::string path_;
  std::string_view source_;
  std::vector<Diagnostic> items_;
  std::unordered_set<std::string> seen_;  // "line:column:message"
  std::size_t dropped_ = 0;
  std::size_t reports_ = 0;
};

}  // namespace chorus
