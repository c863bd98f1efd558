#include "workflows/task_instance.hpp"

#include <filesystem>

#include "workflows/image_reference.hpp"
#include "workflows/placeholder.hpp"

namespace chorus {

std::string resolve_dir(const std::string& base, const std::string& dir) {
  std::filesystem::path p = std::filesystem::path(base) / dir;  // an absolute `dir` replaces base
  std::string out = p.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Status instantiate_task(const TaskTemplate& t, const KeyValues& vars, const std::string& workdir,
                        TaskSpec& spec, DiagnosticList* diags) {
  Status first;
  const std::string context = "in task '" + spec.name + "'";
  auto sub = [&](const LocatedText& text) {
    if (!has_braces(text.text)) return text.text;
    auto r = substitute_placeholders(text.text, vars, context);
    if (r.ok()) return std::move(*r);
    if (diags != nullptr) diags->add(text.pos, r.status().message());
    if (first.ok()) first = r.status();
    return std::string{};
  };
  spec.kind = t.kind;
  spec.pos = {t.pos.line, t.pos.column};
  spec.user = t.user;
  spec.job = t.job;
  spec.per_rank = t.per_rank;
  spec.ranks = t.ranks;
  spec.nodes = t.nodes;
  if (!t.shell) {
    spec.cmd.argv.reserve(t.argv.size());
    for (const auto& a : t.argv) spec.cmd.argv.push_back(sub(a));
  } else if (!t.argv.empty()) {
    for (const auto& a : t.argv) {
      if (!spec.cmd.shell.empty()) spec.cmd.shell += ' ';
      spec.cmd.shell += sub(a);
    }
  } else {
    spec.cmd.shell = sub(t.shell_command);
  }
  spec.env.reserve(t.env.size());
  for (const auto& [k, v] : t.env) spec.env.emplace_back(k, sub(v));
  if (t.workdir) spec.workdir = resolve_dir(workdir, sub(*t.workdir));
  spec.timeout = t.timeout;
  spec.retries = t.retries;
  spec.estimate = t.estimate;
  spec.data = t.data;
  for (const auto& o : t.outputs) spec.outputs.push_back(sub(o));
  for (const auto& in : t.inputs) spec.inputs.push_back(sub(in));
  if (t.image) {
    spec.image = sub(*t.image);
    // Without placeholders the reader checked it; with them only the member's value can be.
    if (has_braces(t.image->text) && first.ok()) {
      if (std::string why = image_reference_problem(spec.image); !why.empty()) {
        const std::string message =
            "image '" + spec.image + "' " + context + " is not an image reference: " + why;
        if (diags != nullptr) diags->add(t.image->pos, message);
        first = invalid_argument(message);
      }
    }
  }
  if (t.image_pull_policy) spec.image_pull_policy = t.image_pull_policy->text;
  return first;
}

}  // namespace chorus
