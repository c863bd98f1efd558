#include "workflows/text_budget.hpp"

#include <algorithm>
#include <limits>

namespace chorus {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  return a > kMax - b ? kMax : a + b;
}

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > kMax / b ? kMax : a * b;
}

// Calls f(text) for every text of `t` that a member copies (with placeholders substituted).
template <typename F>
void for_each_text(const TaskTemplate& t, F&& f) {
  for (const auto& a : t.argv) f(a.text);
  f(t.shell_command.text);
  for (const auto& [k, v] : t.env) {
    f(k);
    f(v.text);
  }
  if (t.workdir) f(t.workdir->text);
  for (const auto& o : t.outputs) f(o.text);
  for (const auto& in : t.inputs) f(in.text);
  for (const auto& a : t.after) f(a.text);
  if (t.image) f(t.image->text);
  if (t.image_pull_policy) f(t.image_pull_policy->text);
}

}  // namespace

std::uint64_t template_text_bytes(const TaskTemplate& t) {
  std::uint64_t n = t.name.size() + t.user.size() + t.job.size();
  for_each_text(t, [&](const std::string& s) { n = add(n, s.size()); });
  for (const auto& u : t.uses) n = add(n, u.text.size());
  for (const auto& v : t.sweep) {
    n = add(n, v.name.size());
    for (const auto& value : v.values) n = add(n, value.size());
  }
  return n;
}

std::uint64_t member_text_bytes(const TaskTemplate& t) {
  std::uint64_t longest = 0;
  std::uint64_t bindings = 0;  // "a=1,b=x" with the longest values
  for (const auto& v : t.sweep) {
    std::uint64_t value = 0;
    for (const auto& s : v.values) value = std::max<std::uint64_t>(value, s.size());
    longest = std::max(longest, value);
    bindings = add(bindings, v.name.size() + value + 2);
  }
  // The name with its bindings, and the bindings again as the member's params.
  std::uint64_t n = add(t.name.size() + t.user.size() + t.job.size() + 2, mul(bindings, 2));
  for_each_text(t, [&](const std::string& s) {
    const auto braces = static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '{'));
    n = add(n, add(s.size(), mul(braces, longest)));
  });
  return n;
}

bool TextBudget::add_read(const TaskTemplate& t, const std::string& what, DiagnosticList& diags) {
  if (over_) return false;
  used_ = add(used_, template_text_bytes(t));
  if (used_ <= max_) return true;
  over_ = true;
  diags.add(t.pos, "the tasks up to " + what + " hold more than " + budget_text(max_) +
                       " of text (commands, env, workdirs, outputs, inputs; each task its own "
                       "copy of what it inherits from 'defaults:' and the top level), the limit "
                       "for a workflow; " +
                       what + " alone holds " + std::to_string(template_text_bytes(t)) +
                       " bytes. Keep large values in a file the tasks read");
  return false;
}

std::string budget_text(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1024 * 1024;
  return bytes % kMiB == 0 ? std::to_string(bytes / kMiB) + " MiB"
                           : std::to_string(bytes) + " bytes";
}

}  // namespace chorus
