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
// FIFO (never opened, so never blocks) and a file that is too large ("the file is N bytes (X
// MiB); <noun>s are limited to M MiB<hint>").
Result<std::string> read_workflow_source(
    const std::string& path, std::uint64_t max_bytes, std::string_view noun = "workflow file",
    std::string_view hint = " (use foreach sweeps instead of listing tasks one by one)");

// Reports into `diags`, each at its line:col: more than `max_bytes` (the whole text), a NUL byte
// ("not a text file", with its offset), invalid UTF-8 (the first bad byte), an empty text (1:1),
// flow collections ([ / {) nested deeper than `max_nesting`, a ',' starting a token outside
// them, and a quoted scalar never closed (where its quote opened). Returns false when it
// reported.
bool check_workflow_text(std::string_view text, std::uint64_t max_bytes, int max_nesting,
                         DiagnosticList& diags);

// Where the '-' of an empty sequence item is. yaml-cpp marks such a null item at `next_token`,
// the offset of the token after it (often the next item's '-' on a later line); this walks back
// over blanks and comments to the item's own '-'. Unknown when the item has no '-' (flow
// sequences).
Position empty_item_position(std::string_view text, std::size_t next_token);

}  // namespace chorus
