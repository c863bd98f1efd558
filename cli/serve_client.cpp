#include "cli/serve_client.hpp"

#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "api/run_workflow.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "runtime/transport/local_socket.hpp"
#include "runtime/transport/message_socket.hpp"

namespace chorus::cli {

std::optional<std::string> chosen_server(const std::string& server_option,
                                         const std::string& state_option) {
  if (!server_option.empty()) return server_option;
  if (const char* env = std::getenv("CHORUS_SERVER"); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  const std::string sock = resolve_state_dir(state_option) + "/serve.sock";
  struct stat st;
  if (::stat(sock.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return sock;
  return std::nullopt;
}

namespace {

constexpr int kReplyTimeoutMs = 30000;

std::string login_name() {
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr) return pw->pw_name;
  return std::to_string(::getuid());
}

// The server's public key: $CHORUS_SERVER_KEY (the key itself, or a file holding it), else
// <key folder>/server.pub.
Result<std::string> server_public_key(const std::string& key_dir) {
  if (const char* env = std::getenv("CHORUS_SERVER_KEY"); env != nullptr && *env != '\0') {
    if (valid_curve_key(env)) return std::string(env);
    return read_public_key(env);
  }
  auto key = read_public_key(key_dir + "/server.pub");
  if (key.status().code() == ErrorCode::not_found) {
    return invalid_argument(
        "no public key of the server: set CHORUS_SERVER_KEY to it (or to its file), or copy the "
        "instance's <state>/serve.pub to " +
        key_dir + "/server.pub");
  }
  return key;
}

// One request over TCP with this user's CURVE pair (chorus keys).
Result<std::string> tcp_request(const std::string& endpoint, const std::string& payload) {
  const std::string dir = client_key_dir();
  auto keys = read_key_pair(dir, "client");
  if (keys.status().code() == ErrorCode::not_found) {
    return invalid_argument("no client key in " + dir +
                            ": run `chorus keys`, and have the instance's admin list the public "
                            "key it prints under keys: users: " +
                            login_name() + " in its config");
  }
  if (!keys.ok()) return keys.status();
  auto server_key = server_public_key(dir);
  if (!server_key.ok()) return server_key.status();
  auto client = ClientSocket::connect(endpoint, *server_key, *keys);
  if (!client.ok()) return client.status();
  if (Status s = (*client)->send(payload); !s.ok()) return s;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
  std::string reply;
  while (std::chrono::steady_clock::now() < give_up) {
    auto got = (*client)->receive(reply);
    if (!got.ok()) return got.status();
    if (*got) return reply;
    if ((*client)->authentication_refused()) {
      return invalid_argument(
          "the server at " + endpoint + " refused this user's key (" + dir +
          "/client.pub): its config must list it under keys: users: " + login_name());
    }
    if ((*client)->failed_handshakes() > 0) {
      return invalid_argument("no secure connection with " + endpoint +
                              ": is CHORUS_SERVER_KEY (or " + dir +
                              "/server.pub) that instance's serve.pub?");
    }
    pollfd p{(*client)->fd(), POLLIN, 0};
    (void)::poll(&p, 1, 50);
  }
  return Status(ErrorCode::unavailable, "no reply within " +
                                            std::to_string(kReplyTimeoutMs / 1000) +
                                            " s (is chorus serve listening on " + endpoint + "?)");
}

}  // namespace

std::string client_key_dir() {
  if (const char* env = std::getenv("CHORUS_KEYS"); env != nullptr && *env != '\0') return env;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    const passwd* pw = ::getpwuid(::getuid());
    home = pw != nullptr ? pw->pw_dir : "/";
  }
  return std::string(home) + "/.chorus/keys";
}

Result<nlohmann::json> ask_server(const std::string& server, nlohmann::json request) {
  request["user"] = login_name();  // over TCP the server checks it against the key's user
  Result<std::string> reply = Status(ErrorCode::internal, "");
  if (server.rfind("tcp://", 0) == 0) {
    reply = tcp_request(server, request.dump());
    if (!reply.ok() && reply.status().code() != ErrorCode::unavailable) return reply.status();
  } else {
    auto client = LocalClientSocket::connect(server);
    if (!client.ok()) {
      return Status(client.status().code(),
                    client.status().message() +
                        " (is chorus serve running? --server, CHORUS_SERVER or the state "
                        "folder's serve.sock name it)");
    }
    reply = (*client)->request(request.dump(), kReplyTimeoutMs);
  }
  if (!reply.ok()) {
    return Status(reply.status().code(), "server " + server + ": " + reply.status().message());
  }
  nlohmann::json r = nlohmann::json::parse(*reply, nullptr, false);
  if (r.is_discarded() || !r.is_object()) {
    return io_error("server " + server + " sent a reply that is not JSON");
  }
  return r;
}

nlohmann::json call_server(const std::string& server, nlohmann::json request, bool json) {
  const OutputMode mode = pick_output_mode(json);
  request["mode"] = mode == OutputMode::json       ? "json"
                    : mode == OutputMode::terminal ? "terminal"
                                                   : "plain";
  auto r = ask_server(server, request);
  if (!r.ok()) {
    Output(mode).error(r.status().message());
    // A missing or refused key is the user's to fix; a server that does not answer is not.
    throw CLI::RuntimeError(r.status().code() == ErrorCode::invalid_argument ? kExitBadInput
                                                                             : kExitError);
  }
  const std::string o = r->value("out", ""), e = r->value("err", "");
  std::fwrite(o.data(), 1, o.size(), stdout);
  std::fflush(stdout);
  std::fwrite(e.data(), 1, e.size(), stderr);
  const int code = r->value("exit", kExitError);
  if (code != 0) throw CLI::RuntimeError(code);
  return std::move(*r);
}

}  // namespace chorus::cli
