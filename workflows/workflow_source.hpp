// Checks on the raw bytes of a workflow file, done before YAML parsing so that a binary, huge or
// pathologically nested file gets a clear message instead of a slow or deep parse.
#pragma once

#include <string>
#include <string_view>

#include "core/status.hpp"
#include "workflows/diagnostic_list.hpp"

namespace chorus {

// Reads a regular file of at most `max_bytes`. Errors (message without the path; the caller adds
// it): not_found / io_error with the errno text, invalid_argument for a directory, a device or
// FIFO (never opened, so never blocks) and a file that is too large.
Result<std::string> read_workflow_source(const std::string& path, std::uint64_t max_bytes);

// Reports into `diags`: an empty text, NUL bytes ("not a text file"), more than `max_bytes`, and
// flow collections ([ / {) nested deeper than `max_nesting`. Returns false when it reported.
bool check_workflow_text(std::string_view text, std::uint64_t max_bytes, int max_nesting,
                         DiagnosticList& diags);

}  // namespace chorus
