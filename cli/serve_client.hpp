// Talking to a served instance (`chorus serve`) from the journal commands: which server a command
// uses, and one request/reply with it. The server renders the answer with the same output layer
// the command would use on a journal of its own, so the output is the same.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/status.hpp"

namespace chorus::cli {

// --server PATH, else $CHORUS_SERVER, else the state folder's serve.sock when it exists (the
// server file of an instance serving that folder). nullopt: no server; read the journal.
std::optional<std::string> chosen_server(const std::string& server_option,
                                         const std::string& state_option);

// One request and its reply, printing nothing. Errors: the server does not answer, or its reply
// is not a JSON object.
// `server` is a Unix socket's path (the peer's uid is the kernel's word) or tcp://HOST:PORT
// (CURVE with this user's pair from client_key_dir(), the server's public key from
// $CHORUS_SERVER_KEY or <key folder>/server.pub). Errors: invalid_argument (no key, a key the
// server refused, a wrong server key: the user's to fix), unavailable (no reply), io_error.
Result<nlohmann::json> ask_server(const std::string& server, nlohmann::json request);

// Where this user's CURVE pair for TCP servers lives: $CHORUS_KEYS, else ~/.chorus/keys.
std::string client_key_dir();

// Sends `request` (its "mode" set from `json`), prints the reply's "out" on stdout and "err" on
// stderr, and throws CLI::RuntimeError with the reply's exit status when it is not 0. Returns the
// reply. A server that does not answer is exit status 3 with what to check.
nlohmann::json call_server(const std::string& server, nlohmann::json request, bool json);

}  // namespace chorus::cli
