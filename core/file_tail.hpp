// The end of a text file, for messages that quote what a program printed before it failed.
#pragma once

#include <string>

namespace chorus {

// The last `max_lines` lines of the file's last 4 KiB, without trailing newlines; "" when the
// file cannot be read.
std::string file_tail(const std::string& path, int max_lines);

}  // namespace chorus
