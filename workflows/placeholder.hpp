// Placeholder substitution for sweep variables: "{part}" becomes the member's value; "{{" and "}}"
// are literal braces. Pure text functions, no YAML.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "core/task_spec.hpp"

namespace chorus {

// Whether `text` needs substitute_placeholders() at all (it contains a brace).
bool has_braces(std::string_view text);

// Replaces every {name} with its value in `vars`. Errors (invalid_argument, message without
// position): an unknown name (with a suggestion among `vars`), a '{' never closed, a '}' never
// opened, an empty or malformed "{...}". `context` (e.g. "in the command of task 'a'") is
// placed after the problem and before the hint on how to write a literal brace.
Result<std::string> substitute_placeholders(std::string_view text, const KeyValues& vars,
                                            std::string_view context = {});

}  // namespace chorus
