#include "cli/output/output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli/json_text.hpp"

namespace chorus::cli {
namespace {

void write_text(std::FILE* to, const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), to);
}

void print_error_to(std::FILE* err, std::string_view message) {
  // Diagnostics already start with "path:line:col:"; other messages get the program's name.
  bool located =
      message.find(": ") != std::string_view::npos && message.find(':') < message.find(' ');
  std::fprintf(err, "%s%.*s\n", located ? "" : "chorus: ", static_cast<int>(message.size()),
               message.data());
}

}  // namespace

OutputMode pick_output_mode(bool json) {
  if (json) return OutputMode::json;
  const char* term = std::getenv("TERM");
  bool dumb = term != nullptr && std::strcmp(term, "dumb") == 0;
  return isatty(STDERR_FILENO) && !dumb ? OutputMode::terminal : OutputMode::plain;
}

Output Output::for_command(bool json) {
  return Output(pick_output_mode(json));
}

void Output::error(std::string_view message) const {
  print_error_to(err_, message);
}

void Output::note(std::string_view text) const {
  std::fprintf(err_, "chorus: %.*s\n", static_cast<int>(text.size()), text.data());
}

void Output::json_document(const nlohmann::json& j, int indent) const {
  write_text(out_, json_text(j, indent) + "\n");
}

void Output::json_document(const nlohmann::ordered_json& j, int indent) const {
  write_text(out_, json_text(j, indent) + "\n");
}

void Output::json_line(const nlohmann::json& j) const {
  std::string line = json_text(j);
  line += '\n';
  write_text(out_, line);
}

void print_error(std::string_view message) {
  print_error_to(stderr, message);
}

}  // namespace chorus::cli
