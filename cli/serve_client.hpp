// Talking to a served instance (`chorus serve`) from the journal commands: which server a command
// uses, and one request/reply with it. The server renders the answer with the same output layer
// the command would use on a journal of its own, so the output is the same.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace chorus::cli {

// --server PATH, else $CHORUS_SERVER, else the state folder's serve.sock when it exists (the
// server file of an instance serving that folder). nullopt: no server; read the journal.
std::optional<std::string> chosen_server(const std::string& server_option,
                                         const std::string& state_option);

// Sends `request` (its "mode" set from `json`), prints the reply's "out" on stdout and "err" on
// stderr, and throws CLI::RuntimeError with the reply's exit status when it is not 0. Returns the
// reply. A server that does not answer is exit status 3 with what to check.
nlohmann::json call_server(const std::string& server, nlohmann::json request, bool json);

}  // namespace chorus::cli
