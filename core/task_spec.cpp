#include "core/task_spec.hpp"

#include "core/hash.hpp"

namespace chorus {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::executable:
      return "executable";
    case TaskKind::mpi:
      return "mpi";
    case TaskKind::function:
      return "function";
    case TaskKind::service:
      return "service";
  }
  return "unknown";
}

std::string Command::display() const {
  if (uses_shell()) return shell;
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool quote = a.empty() || a.find_first_of(" \t\"'$\\*?;&|<>()") != std::string::npos;
    if (quote) {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    } else {
      out += a;
    }
  }
  return out;
}

std::uint64_t spec_fingerprint(const TaskSpec& spec) {
  Fnv1a h;
  h.add(spec.name);
  h.add(static_cast<std::uint64_t>(spec.kind));
  if (spec.kind == TaskKind::function) return h.value();
  h.add(spec.cmd.shell);
  h.add(static_cast<std::uint64_t>(spec.cmd.argv.size()));
  for (const auto& a : spec.cmd.argv) h.add(a);
  for (const auto& [k, v] : spec.env) h.add(k).add(v);
  for (const auto& [k, v] : spec.params) h.add(k).add(v);
  h.add(spec.workdir);
  h.add(static_cast<std::uint64_t>(spec.ranks));
  h.add(static_cast<std::uint64_t>(spec.per_rank.cores));
  h.add(static_cast<std::uint64_t>(spec.per_rank.gpus));
  // Only when set, so fingerprints journaled before the field existed still match.
  if (spec.nodes != 0) h.add(static_cast<std::uint64_t>(spec.nodes));
  return h.value();
}

}  // namespace chorus
