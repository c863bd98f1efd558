// TextBudget: bounds the text a workflow's tasks hold, counted before it is copied. A small file
// can ask for gigabytes without any alias: a 10 KB `env:` in `defaults:` is copied into every
// task, and a sweep copies each task's command, env and workdir into each of its members.
#pragma once

#include <cstdint>
#include <string>

#include "workflows/diagnostic_list.hpp"
#include "workflows/task_template.hpp"

namespace chorus {

// The bytes of a template's text as read: name, command, env (names and values, inherited ones
// included), workdir, outputs, inputs, after, uses.
std::uint64_t template_text_bytes(const TaskTemplate& t);

// An upper bound on the bytes one expanded member of `t` holds: each text with every
// placeholder replaced by the longest value of `t`'s sweep, plus the member's name and its
// variable bindings. Saturates at UINT64_MAX.
std::uint64_t member_text_bytes(const TaskTemplate& t);

class TextBudget {
 public:
  explicit TextBudget(std::uint64_t max_bytes) : max_(max_bytes) {}

  // Counts `t` as read (template_text_bytes); once the total passes the budget, reports at
  // t.pos (`what` names it, e.g. "task 'a'") and returns false, then and on every later call.
  bool add_read(const TaskTemplate& t, const std::string& what, DiagnosticList& diags);

  std::uint64_t max() const { return max_; }

 private:
  std::uint64_t max_;
  std::uint64_t used_ = 0;
  bool over_ = false;
};

// "512 MiB"-style size for messages.
std::string budget_text(std::uint64_t bytes);

}  // namespace chorus
