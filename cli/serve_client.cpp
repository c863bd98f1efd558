#include "cli/serve_client.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "api/run_workflow.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "runtime/transport/local_socket.hpp"

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

nlohmann::json call_server(const std::string& server, nlohmann::json request, bool json) {
  const OutputMode mode = pick_output_mode(json);
  request["mode"] = mode == OutputMode::json       ? "json"
                    : mode == OutputMode::terminal ? "terminal"
                                                   : "plain";
  const Output out(mode);
  auto client = LocalClientSocket::connect(server);
  if (!client.ok()) {
    out.error(client.status().message() +
              " (is chorus serve running? --server, CHORUS_SERVER or the state folder's "
              "serve.sock name it)");
    throw CLI::RuntimeError(kExitError);
  }
  auto reply = (*client)->request(request.dump(), 30000);
  if (!reply.ok()) {
    out.error("server " + server + ": " + reply.status().message());
    throw CLI::RuntimeError(kExitError);
  }
  nlohmann::json r = nlohmann::json::parse(*reply, nullptr, false);
  if (r.is_discarded() || !r.is_object()) {
    out.error("server " + server + " sent a reply that is not JSON");
    throw CLI::RuntimeError(kExitError);
  }
  const std::string o = r.value("out", ""), e = r.value("err", "");
  std::fwrite(o.data(), 1, o.size(), stdout);
  std::fflush(stdout);
  std::fwrite(e.data(), 1, e.size(), stderr);
  const int code = r.value("exit", kExitError);
  if (code != 0) throw CLI::RuntimeError(code);
  return r;
}

}  // namespace chorus::cli
