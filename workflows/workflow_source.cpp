#include "workflows/workflow_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/text.hpp"

namespace chorus {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// "16 MiB", "16.5 MiB": one decimal, rounded up, so a file just over the limit never reads
// as the limit itself.
std::string mib(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1024 * 1024;
  if (bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  const std::uint64_t tenths = bytes / kMiB * 10 + ((bytes % kMiB) * 10 + kMiB - 1) / kMiB;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " MiB";
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// A block scalar header such as "|", ">-", "|2+" ending the line: the lines after it that are
// more indented are text, not structure.
bool ends_with_block_header(std::string_view line) {
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  std::size_t i = line.size();
  while (i > 0 && (std::isdigit(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == '+' ||
                   line[i - 1] == '-')) {
    --i;
  }
  if (i == 0 || (line[i - 1] != '|' && line[i - 1] != '>')) return false;
  --i;
  return i == 0 || is_space(line[i - 1]);
}

}  // namespace

Result<std::string> read_workflow_source(const std::string& path, std::uint64_t max_bytes,
                                         std::string_view noun, std::string_view hint) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    std::string why = std::string("cannot open: ") + std::strerror(err);
    return err == ENOENT ? not_found(why) : io_error(why);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return io_error(std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return invalid_argument("is a directory, not a " + std::string(noun));
  if (!S_ISREG(st.st_mode)) return invalid_argument("is not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    return invalid_argument("the file is " + std::to_string(size) + " bytes (" + mib(size) + "); " +
                            std::string(noun) + "s are limited to " + mib(max_bytes) +
                            std::string(hint));
  }
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  // The file may grow while read: read at most max_bytes + 1 to detect that without bound.
  while (true) {
    if (got == text.size()) {
      if (text.size() > max_bytes) break;
      text.resize(std::min<std::size_t>(text.size() + 65536, max_bytes + 1));
    }
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  if (text.size() > max_bytes) {
    return invalid_argument("the file grew to more than " + std::to_string(max_bytes) +
                            " bytes while it was read; " + std::string(noun) + "s are limited to " +
                            mib(max_bytes));
  }
  return text;
}

namespace {

// 1-based line and byte column of byte `offset` (columns count bytes, as yaml-cpp's marks do).
Position position_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view head = text.substr(0, offset);
  const int line = 1 + static_cast<int>(std::count(head.begin(), head.end(), '\n'));
  const std::size_t nl = head.rfind('\n');
  const std::size_t col = nl == std::string_view::npos ? offset : offset - nl - 1;
  return {line, static_cast<int>(col) + 1};
}

std::string hex_byte(unsigned char c) {
  static const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

}  // namespace

bool check_workflow_text(std::string_view text, std::uint64_t max_bytes, int max_nesting,
                         DiagnosticList& diags) {
  if (text.size() > max_bytes) {
    diags.add({}, "the text is " + std::to_string(text.size()) + " bytes (" + mib(text.size()) +
                      "), more than the limit of " + mib(max_bytes) + " for a workflow");
    return false;
  }
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    diags.add(position_at(text, nul), "not a text file: a NUL byte at offset " +
                                          std::to_string(nul) + "; a workflow file is YAML text");
    return false;
  }
  // Every string of a workflow may reach JSON output (run --json, status --json), which only
  // holds UTF-8.
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    diags.add(position_at(text, bad),
              "invalid UTF-8: byte " + hex_byte(static_cast<unsigned char>(text[bad])) +
                  " at offset " + std::to_string(bad) +
                  " does not start a valid UTF-8 character; save the file as UTF-8");
    return false;
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    diags.add({1, 1}, "the file is empty; a workflow needs at least 'tasks:'");
    return false;
  }
  // A cheap scan of flow nesting and quoting: quotes, comments and block scalars are skipped,
  // and a bracket or quote counts only where a YAML value can start, so `echo [x` or `it's` in
  // a plain scalar does not count.
  int depth = 0;
  bool in_single = false;
  bool in_double = false;
  Position quote_open;    // where the quoted scalar being scanned started
  int block_indent = -1;  // >= 0: inside a block scalar whose header line had this indent
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    int indent = 0;
    while (static_cast<std::size_t>(indent) < line.size() && line[indent] == ' ') ++indent;
    const bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos;
    if (block_indent >= 0) {
      if (blank || indent > block_indent) continue;
      block_indent = -1;
    }
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (!in_single && !in_double && first != std::string_view::npos && line[first] == '#') {
      continue;  // a comment line: neither content nor structure
    }
    // Document markers and directives are not content; after "---" a value may start.
    const bool marker =
        !in_single && !in_double && depth == 0 &&
        (line.starts_with("---") || line.starts_with("...") || line.starts_with("%"));
    bool token_start = true;
    bool after_closed = false;  // just after a closing quote, or a ] / } back at depth 0
    std::size_t comment = line.size();
    std::size_t from = in_single || in_double ? 0 : static_cast<std::size_t>(indent);
    if (marker) from = line.starts_with("%") ? line.size() : 3;
    for (std::size_t i = from; i < line.size(); ++i) {
      const char c = line[i];
      const char next = i + 1 < line.size() ? line[i + 1] : ' ';
      if (in_double) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_double = false;
          after_closed = true;
        }
        continue;
      }
      if (in_single) {
        if (c == '\'' && next == '\'') {
          ++i;
        } else if (c == '\'') {
          in_single = false;
          after_closed = true;
        }
        continue;
      }
      // yaml-cpp 0.7 allocates without bound on some ',' tokens outside flow collections
      // (",a", "- a\n,", "[a], b", "---\n  ,a"), and which ones depends on its parser state.
      // So every ',' that starts a token outside [...] / {...} is refused. Only one valid form
      // is lost: a plain scalar continued on a line that starts with ','; quoting fixes it.
      if (c == ',' && depth == 0 && (token_start || after_closed)) {
        diags.add({line_no, static_cast<int>(i) + 1},
                  "YAML syntax error: ',' outside [...] or {...} (quote the value if the comma "
                  "belongs to it)");
        return false;
      }
      const bool was_closed = after_closed;
      after_closed = false;
      if (c == '#' && (i == 0 || is_space(line[i - 1]))) {
        comment = i;
        break;
      }
      if ((c == '&' || c == '!') && token_start) {
        // An anchor or a tag: the value (maybe quoted) starts after it.
        while (i + 1 < line.size() && !is_space(line[i + 1])) ++i;
      } else if ((c == '"' || c == '\'') && token_start) {
        (c == '"' ? in_double : in_single) = true;
        quote_open = {line_no, static_cast<int>(i) + 1};
        token_start = false;
      } else if ((c == '[' || c == '{') && (token_start || depth > 0)) {
        if (++depth > max_nesting) {
          diags.add({line_no, static_cast<int>(i) + 1}, "nesting is deeper than " +
                                                            std::to_string(max_nesting) +
                                                            " levels; a workflow needs only a few");
          return false;
        }
        token_start = true;
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
        token_start = false;
        after_closed = depth == 0;
      } else if (c == ',' && depth > 0) {
        token_start = true;
      } else if (c == ':' && (is_space(next) || depth > 0)) {
        token_start = true;
      } else if ((c == '-' || c == '?') && token_start && is_space(next)) {
        token_start = true;
      } else if (!is_space(c)) {
        token_start = false;
      } else {
        after_closed = was_closed;  // spaces keep the state: `"a" ,` is still after a quote
      }
    }
    if (!in_single && !in_double && depth == 0 && ends_with_block_header(line.substr(0, comment))) {
      block_indent = indent;
    }
  }
  // yaml-cpp 0.7 accepts a quoted scalar left open at the end of the file when a newline follows
  // it, and the rest of the file (often the remaining tasks) silently becomes its text.
  if (in_single || in_double) {
    diags.add(quote_open, std::string("this ") + (in_double ? "double" : "single") +
                              "-quoted string is never closed: the rest of the file would be "
                              "part of it (add the closing " +
                              (in_double ? "\"" : "'") + ")");
    return false;
  }
  return true;
}

Position empty_item_position(std::string_view text, std::size_t next_token) {
  // Walk back over blank space and comments to the '-' that introduced the empty item.
  std::size_t end = std::min(next_token, text.size());
  while (end > 0) {
    const std::size_t line_start = [&] {
      const std::size_t nl = text.rfind('\n', end - 1);
      return nl == std::string_view::npos ? std::size_t{0} : nl + 1;
    }();
    std::string_view line = text.substr(line_start, end - line_start);
    // Drop a comment: a '#' at the start or after a space (a line holding only '-' and blanks
    // has no quotes, so this is exact for the lines it matters for).
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '#' && (i == 0 || is_space(line[i - 1]))) {
        line = line.substr(0, i);
        break;
      }
    }
    while (!line.empty() && (is_space(line.back()) || line.back() == '\n')) line.remove_suffix(1);
    if (!line.empty()) {
      if (line.back() == '-') return position_at(text, line_start + line.size() - 1);
      return {};
    }
    if (line_start == 0) break;
    end = line_start - 1;
  }
  return {};
}

}  // namespace chorus
