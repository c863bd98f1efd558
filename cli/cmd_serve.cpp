// chorus serve: one long-lived instance that users of this machine submit workflows into
// (api/served_instance.hpp). It listens on <state>/serve.sock; each request is one JSON object
// and gets one JSON reply {exit, out, err, ...}, where out/err are what the command would have
// printed (rendered here with the same output layer). Who asks is the kernel's word
// (SO_PEERCRED): a user sees, reads and cancels only their own runs; root sees all.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/run_workflow.hpp"
#include "api/served_instance.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/status_report.hpp"
#include "runtime/log_paths.hpp"
#include "runtime/transport/local_socket.hpp"

namespace chorus::cli {
namespace {

constexpr std::int64_t kMaxRequest = 16 << 20;  // a workflow file larger than 16 MiB is refused

// Output into two strings, for a reply.
class Rendered {
 public:
  explicit Rendered(const std::string& mode) {
    out_file_ = open_memstream(&out_, &out_size_);
    err_file_ = open_memstream(&err_, &err_size_);
    const OutputMode m = mode == "json"       ? OutputMode::json
                         : mode == "terminal" ? OutputMode::terminal
                                              : OutputMode::plain;
    output_ = std::make_unique<Output>(m, out_file_, err_file_);
  }
  ~Rendered() {
    close();
    std::free(out_);
    std::free(err_);
  }
  const Output& out() const { return *output_; }
  nlohmann::json reply(int exit) {
    close();
    nlohmann::json r;
    r["exit"] = exit;
    r["out"] = std::string(out_ != nullptr ? out_ : "", out_size_);
    r["err"] = std::string(err_ != nullptr ? err_ : "", err_size_);
    return r;
  }

 private:
  void close() {
    if (out_file_ != nullptr) std::fclose(out_file_);
    if (err_file_ != nullptr) std::fclose(err_file_);
    out_file_ = err_file_ = nullptr;
  }
  char* out_ = nullptr;
  char* err_ = nullptr;
  std::size_t out_size_ = 0, err_size_ = 0;
  std::FILE* out_file_ = nullptr;
  std::FILE* err_file_ = nullptr;
  std::unique_ptr<Output> output_;
};

int exit_for(const Status& s) {
  return s.code() == ErrorCode::invalid_argument || s.code() == ErrorCode::not_found ? kExitBadInput
                                                                                     : kExitError;
}

class Server {
 public:
  Server(ServedInstance& instance, StateStore& journal, std::string state_dir)
      : instance_(instance), journal_(journal), state_dir_(std::move(state_dir)) {}

  std::string handle(const std::string& payload, const PeerCredentials& who) {
    nlohmann::json req = nlohmann::json::parse(payload, nullptr, false);
    std::string mode = "plain";
    if (req.is_object() && req.contains("mode") && req["mode"].is_string()) mode = req["mode"];
    Rendered r(mode);
    if (req.is_discarded() || !req.is_object() || !req.contains("op") || !req["op"].is_string()) {
      r.out().error("the server takes one JSON object with an \"op\" per request");
      return r.reply(kExitBadInput).dump();
    }
    try {
      const std::string op = req["op"];
      int code = kExitBadInput;
      if (op == "ping") {
        code = kExitOk;
      } else if (op == "submit") {
        code = submit(req, who, r.out());
      } else if (op == "list") {
        code = list(who, r.out());
      } else if (op == "status") {
        code = status(req, who, r.out());
      } else if (op == "cancel") {
        code = cancel(req, who, r.out());
      } else if (op == "logs") {
        code = logs(req, who, r.out());
      } else {
        r.out().error("unknown request '" + op +
                      "' (this server answers submit, list, status, cancel, logs)");
      }
      return r.reply(code).dump();
    } catch (const nlohmann::json::exception& e) {
      r.out().error(std::string("malformed request: ") + e.what());
      return r.reply(kExitBadInput).dump();
    }
  }

 private:
  static std::string text(const nlohmann::json& req, const char* key) {
    return req.contains(key) && req[key].is_string() ? req[key].get<std::string>() : "";
  }

  bool sees(const PeerCredentials& who, const std::string& run) const {
    auto owner = instance_.owner_of(run);
    return owner && (who.uid == 0 || *owner == who.uid);
  }

  // The user's run named `asked` (an id, a unique prefix, "latest" = their newest).
  Result<RunInfo> find(const std::string& asked, const PeerCredentials& who) {
    if (asked == "latest" || asked.empty()) {
      auto runs = instance_.runs();
      for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (who.uid == 0 || it->second == who.uid) return journal_.find_run(it->first);
      }
      return not_found("you have no runs in this instance");
    }
    auto found = journal_.find_run(asked);
    if (!found.ok() || !sees(who, found->id)) {
      return not_found("no run '" + asked + "' of yours in this instance (chorus list shows them)");
    }
    return found;
  }

  int submit(const nlohmann::json& req, const PeerCredentials& who, const Output& out) {
    SubmitRequest s;
    s.who = submitter_of(who.uid);
    s.who.gid = who.gid;
    s.key = text(req, "key");
    s.workflow_path = text(req, "path");
    s.workflow_text = text(req, "text");
    s.cwd = text(req, "cwd");
    if (s.cwd.empty() || s.cwd.front() != '/') {
      out.error("a submission needs the client's working directory (absolute)");
      return kExitBadInput;
    }
    auto accepted = instance_.submit(s);
    if (!accepted.ok()) {
      out.error(accepted.status().message());
      return exit_for(accepted.status());
    }
    std::fprintf(stderr, "chorus serve: %s run %s from %s (uid %u)\n",
                 accepted->again ? "repeated" : "accepted", accepted->run_id.c_str(),
                 s.who.name.c_str(), who.uid);
    if (out.json()) {
      out.json_document(nlohmann::json{{"run", accepted->run_id}, {"again", accepted->again}});
    } else {
      std::fprintf(out.out(), "%s\n", accepted->run_id.c_str());
    }
    return kExitOk;
  }

  int list(const PeerCredentials& who, const Output& out) {
    std::vector<RunInfo> runs;
    for (const auto& [id, owner] : instance_.runs()) {
      if (who.uid != 0 && owner != who.uid) continue;
      auto info = journal_.find_run(id);
      if (!info.ok()) continue;
      info->status = effective_status(*info);
      runs.push_back(std::move(*info));
    }
    out.run_list(runs);
    return kExitOk;
  }

  int status(const nlohmann::json& req, const PeerCredentials& who, const Output& out) {
    auto run = find(text(req, "run"), who);
    auto state = run.ok() ? journal_.replay(run->id) : Result<RunState>(run.status());
    if (!state.ok()) {
      out.error(state.status().message());
      return run.ok() ? kExitError : kExitBadInput;
    }
    out.run_status(make_status_report(journal_, *run, *state, req.value("tasks", false),
                                      req.value("nodes", false)));
    return kExitOk;
  }

  int cancel(const nlohmann::json& req, const PeerCredentials& who, const Output& out) {
    auto run = find(text(req, "run"), who);
    if (!run.ok()) {
      out.error(run.status().message());
      return kExitBadInput;
    }
    if (run->status != RunStatus::running) {
      out.run_already_ended(run->id, run->status);
      return kExitOk;
    }
    if (Status s = instance_.cancel(run->id); !s.ok()) {
      out.error(s.message());
      return exit_for(s);
    }
    out.run_cancelling(run->id, getpid());
    return kExitOk;
  }

  int logs(const nlohmann::json& req, const PeerCredentials& who, const Output& out) {
    auto run = find(text(req, "run"), who);
    auto state = run.ok() ? journal_.replay(run->id) : Result<RunState>(run.status());
    if (!state.ok()) {
      out.error(state.status().message());
      return run.ok() ? kExitError : kExitBadInput;
    }
    const std::string task = text(req, "task");
    for (const TaskRecord& t : state->tasks) {
      if (t.name != task) continue;
      const unsigned asked = req.value("attempt", 0U);
      const unsigned attempt = asked != 0 ? asked : t.attempt;
      const std::string dir = run_log_dir(state_dir_, run->id);
      auto copy = [&](const char* stream, std::FILE* to) {
        std::ifstream in(log_path(dir, t.name, attempt, stream), std::ios::binary);
        std::stringstream buf;
        buf << in.rdbuf();
        const std::string body = buf.str();
        std::fwrite(body.data(), 1, body.size(), to);
      };
      if (!req.value("stderr", false)) copy("out", out.out());
      if (!req.value("stdout", false)) copy("err", out.err());
      return kExitOk;
    }
    out.error("run " + run->id + " has no task '" + task + "' that started");
    return kExitBadInput;
  }

  ServedInstance& instance_;
  StateStore& journal_;
  std::string state_dir_;
};

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve", "Run a long-lived instance that users submit workflows into (chorus submit)");
  struct Args {
    std::string state_dir;
    std::string queue = "uwfq";
    std::string placement = "first-fit";
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_option("--queue", a->queue, "Queue policy over every user's tasks")->default_str("uwfq");
  cmd->add_option("--placement", a->placement, "Placement policy")->default_str("first-fit");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    const bool root = ::geteuid() == 0;
    // What the instance writes is its own: the journal holds every user's runs.
    ::umask(077);
    const std::string state = resolve_state_dir(a->state_dir);
    ::mkdir(state.c_str(), 0700);
    if (root) ::chmod(state.c_str(), 0711);  // users reach the socket, list nothing

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the coordinator's thread starts
    const int sigfd = signalfd(-1, &signals, SFD_CLOEXEC);

    const std::string path = state + "/serve.sock";
    auto socket = LocalServerSocket::bind(path, root ? 0666 : 0600, kMaxRequest);
    if (!socket.ok()) {
      out.error(socket.status().message());
      throw CLI::RuntimeError(socket.status().code() == ErrorCode::unavailable ? kExitBadInput
                                                                               : kExitError);
    }
    ServedInstanceOptions options;
    options.state_dir = state;
    options.queue = a->queue;
    options.placement = a->placement;
    auto instance = ServedInstance::start(options);
    if (!instance.ok()) {
      out.error(instance.status().message());
      throw CLI::RuntimeError(exit_for(instance.status()));
    }
    auto journal = open_sqlite_store(journal_path(state));
    if (!journal.ok()) {
      out.error(journal.status().message());
      throw CLI::RuntimeError(kExitError);
    }
    Server server(**instance, **journal, state);
    std::fprintf(stderr, "chorus serve: listening on %s (queue %s, %s)\n", path.c_str(),
                 a->queue.c_str(), root ? "tasks run as their submitters" : "one user");
    std::string peer, payload;
    while (true) {
      pollfd fds[2] = {{(*socket)->fd(), POLLIN, 0}, {sigfd, POLLIN, 0}};
      (void)::poll(fds, 2, 1000);
      if (fds[1].revents & POLLIN) break;
      while (true) {
        PeerCredentials who;
        auto got = (*socket)->receive(peer, payload, who);
        if (!got.ok()) {
          std::fprintf(stderr, "chorus serve: %s\n", got.status().message().c_str());
          break;
        }
        if (!*got) break;
        (void)(*socket)->send(peer, server.handle(payload, who));
      }
    }
    std::fprintf(stderr, "chorus serve: stopping; the runs resume when it starts again\n");
    (*instance)->stop();
  });
}

const CommandRegistrar registrar{"serve", add_serve_command};

}  // namespace
}  // namespace chorus::cli
