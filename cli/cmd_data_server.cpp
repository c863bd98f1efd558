// chorus data-server --listen HOST:PORT: the far end of a link for the agents' probes and the
// test bed's jobs (runtime/netprobe/data_server.hpp; protocol in data_protocol.hpp). Runs in the
// foreground, prints `listening on HOST:PORT` (the real port when PORT is 0) on stdout, flushed,
// and stops cleanly on SIGINT or SIGTERM (printing its counters on stderr).

#include <signal.h>

#include <atomic>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/output/output.hpp"
#include "runtime/netprobe/data_server.hpp"

namespace chorus::cli {
namespace {

std::atomic<netprobe::DataServer*> g_server{nullptr};

void on_stop_signal(int) {
  if (auto* s = g_server.load()) s->stop();  // one write(2): async-signal-safe
}

void add_data_server_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "data-server", "Serve PING/GET/PUT for network probes and test jobs (until SIGINT/SIGTERM)");
  auto listen = std::make_shared<std::string>();
  auto idle = std::make_shared<int>(60);
  cmd->add_option("--listen", *listen, "HOST:PORT to listen on (PORT 0 = any free port)")
      ->required();
  cmd->add_option("--idle-timeout", *idle,
                  "Drop a connection silent this many seconds (a client that vanished)")
      ->default_str("60")
      ->check(CLI::Range(1, 86400));
  cmd->callback([listen, idle] {
    const Output out = Output::for_command(false);
    netprobe::DataServerOptions options;
    options.idle_timeout = std::chrono::seconds(*idle);
    auto server = netprobe::DataServer::listen(*listen, options);
    if (!server.ok()) {
      out.error(server.status().message());
      throw CLI::RuntimeError(server.status().code() == ErrorCode::invalid_argument ? kExitBadInput
                                                                                    : kExitError);
    }
    netprobe::DataServer& s = **server;
    g_server.store(&s);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    const bool v6 = s.host().find(':') != std::string::npos;
    std::fprintf(out.out(), "listening on %s%s%s:%d\n", v6 ? "[" : "", s.host().c_str(),
                 v6 ? "]" : "", s.port());
    out.flush();
    const Status ran = s.run();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    g_server.store(nullptr);
    const auto st = s.stats();
    out.note("data-server stopped: " + std::to_string(st.connections) + " connections, " +
             std::to_string(st.requests) + " requests, " + std::to_string(st.errors) +
             " refused, " + std::to_string(st.bytes_sent) + " bytes sent, " +
             std::to_string(st.bytes_received) + " bytes received");
    if (!ran.ok()) {
      out.error(ran.message());
      throw CLI::RuntimeError(kExitError);
    }
  });
}

const CommandRegistrar registrar{"data-server", add_data_server_command};

}  // namespace
}  // namespace chorus::cli
