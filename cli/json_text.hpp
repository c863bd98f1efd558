// json_text: the one way the CLI turns JSON into text. Every JSON writer of the CLI uses it.
//
// Why: strings come from journals and workflow files written before invalid UTF-8 was refused at
// load; nlohmann's dump() throws type_error 316 on such bytes, which would abort a `status --json`
// of an old run. Here each invalid byte becomes U+FFFD instead, so the output is always valid JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace chorus::cli {

// indent < 0: one line; otherwise pretty-printed with that many spaces.
template <typename Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace chorus::cli
