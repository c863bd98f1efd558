// chorus serve: one long-lived instance that users of this machine submit workflows into
// (api/served_instance.hpp). It listens on <state>/serve.sock; each request is one JSON object
// and gets one JSON reply {exit, out, err, ...}, where out/err are what the command would have
// printed (rendered here with the same output layer). Who asks is the kernel's word
// (SO_PEERCRED): a user sees, reads and cancels only their own runs; root sees all.
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "adapters/slurm/allocation.hpp"
#include "adapters/slurm/slurm_client.hpp"
#include "api/run_workflow.hpp"
#include "api/served_instance.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "cli/journal_access.hpp"
#include "cli/output/output.hpp"
#include "cli/service_endpoints.hpp"
#include "cli/status_report.hpp"
#include "runtime/backends/pilots_backend.hpp"
#include "runtime/backends/slurm_backend.hpp"
#include "runtime/log_paths.hpp"
#include "runtime/report/html_report.hpp"
#include "runtime/transport/curve_keys.hpp"
#include "runtime/transport/local_socket.hpp"
#include "runtime/transport/message_socket.hpp"
#include "workflows/serve_config.hpp"

namespace chorus::cli {
namespace {

// A request larger than kMaxRequest gets a refusal; one past kMaxFrame never arrives: libzmq
// drops that connection (the client then sees no reply).
constexpr std::size_t kMaxRequest = 16 << 20;
constexpr std::int64_t kMaxFrame = 64 << 20;

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

// A reply as sent: bytes that are not UTF-8 (a task's binary output in `logs`, a name from a
// damaged journal) become U+FFFD, so no output can make the reply, or the server, fail.
std::string wire(const nlohmann::json& reply) {
  return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Bad requests, unknown runs and refusals by the limits are the client's to fix (2); the rest
// is the server's (3).
int exit_for(const Status& s) {
  const ErrorCode c = s.code();
  return c == ErrorCode::invalid_argument || c == ErrorCode::not_found ||
                 c == ErrorCode::unsatisfiable || c == ErrorCode::unavailable
             ? kExitBadInput
             : kExitError;
}

class Server {
 public:
  Server(ServedInstance& instance, StateStore& journal, std::string state_dir)
      : instance_(instance), journal_(journal), state_dir_(std::move(state_dir)) {}

  // `key_user`: over TCP, the user whose key the connection authenticated with; a request that
  // says it comes from another user is refused (that user's key is not theirs to use).
  std::string handle(const std::string& payload, const PeerCredentials& who,
                     const std::string* key_user = nullptr) {
    if (payload.size() > kMaxRequest) {
      Rendered r("plain");
      r.out().error("request of " + std::to_string(payload.size()) + " bytes refused: at most " +
                    std::to_string(kMaxRequest >> 20) +
                    " MiB (a workflow that large is better written with foreach sweeps)");
      return wire(r.reply(kExitBadInput));
    }
    nlohmann::json req = nlohmann::json::parse(payload, nullptr, false);
    std::string mode = "plain";
    if (req.is_object() && req.contains("mode") && req["mode"].is_string()) mode = req["mode"];
    Rendered r(mode);
    if (req.is_discarded() || !req.is_object() || !req.contains("op") || !req["op"].is_string()) {
      r.out().error("the server takes one JSON object with an \"op\" per request");
      return wire(r.reply(kExitBadInput));
    }
    if (key_user != nullptr && req.contains("user") && req["user"].is_string() &&
        req["user"].get<std::string>() != *key_user) {
      r.out().error("this key is " + *key_user + "'s, not " + req["user"].get<std::string>() +
                    "'s: each user connects with their own (chorus keys)");
      return wire(r.reply(kExitBadInput));
    }
    try {
      const std::string op = req["op"];
      int code = kExitBadInput;
      nlohmann::json extra = nlohmann::json::object();  // facts for the client, beside out/err
      if (op == "ping") {
        code = kExitOk;
      } else if (op == "submit") {
        code = submit(req, who, r.out());
      } else if (op == "list") {
        code = list(who, r.out());
      } else if (op == "status") {
        code = status(req, who, r.out(), extra);
      } else if (op == "cancel") {
        code = cancel(req, who, r.out(), extra);
      } else if (op == "logs") {
        code = logs(req, who, r.out());
      } else if (op == "report") {
        code = report(req, who, r.out(), extra);
      } else if (op == "endpoints") {
        code = endpoints(req, who, r.out());
      } else {
        r.out().error("unknown request '" + op +
                      "' (this server answers submit, list, status, cancel, logs, report, "
                      "endpoints)");
      }
      nlohmann::json reply = r.reply(code);
      reply.update(extra);
      return wire(reply);
    } catch (const nlohmann::json::exception& e) {
      r.out().error(std::string("malformed request: ") + e.what());
      return wire(r.reply(kExitBadInput));
    }
  }

  // A request on a connection whose user has no key listed any more (removed, then SIGHUP).
  std::string refuse_unlisted(const std::string& key_user) {
    Rendered r("plain");
    r.out().error("the server no longer lists a key of " + key_user +
                  " (its config changed): ask its admin to add yours (chorus keys)");
    return wire(r.reply(kExitBadInput));
  }

  // A request over TCP from the user `key_user` (the user id its key carries): that user's
  // account on this machine is who asks.
  std::string handle_tcp(const std::string& payload, const std::string& key_user) {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwnam_r(key_user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 ||
        found == nullptr) {
      Rendered r("plain");
      r.out().error("the key's user '" + key_user +
                    "' has no account on the server's machine: runs execute as their submitter");
      return wire(r.reply(kExitBadInput));
    }
    const PeerCredentials who{static_cast<std::uint32_t>(pw.pw_uid),
                              static_cast<std::uint32_t>(pw.pw_gid), 0};
    return handle(payload, who, &key_user);
  }

 private:
  static std::string text(const nlohmann::json& req, const char* key) {
    return req.contains(key) && req[key].is_string() ? req[key].get<std::string>() : "";
  }

  // Root and the config's admins see every run.
  bool admin(const PeerCredentials& who) const {
    if (who.uid == 0) return true;
    if (instance_.access().config().admin_users.empty() &&
        instance_.access().config().admin_groups.empty()) {
      return false;
    }
    const Submitter s = submitter_of(who.uid);
    return instance_.access().is_admin(who.uid, s.name, s.gid);
  }

  bool sees(const PeerCredentials& who, const std::string& run) const {
    auto owner = instance_.owner_of(run);
    return owner && (*owner == who.uid || admin(who));
  }

  // The user's run named `asked` (an id, a unique prefix, "latest" = their newest).
  Result<RunInfo> find(const std::string& asked, const PeerCredentials& who) {
    if (asked == "latest" || asked.empty()) {
      auto runs = instance_.runs();
      const bool all = admin(who);
      for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
        if (all || it->second == who.uid) return journal_.find_run(it->first);
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
    const bool all = admin(who);
    for (const auto& [id, owner] : instance_.runs()) {
      if (!all && owner != who.uid) continue;
      auto info = journal_.find_run(id);
      if (!info.ok()) continue;
      info->status = effective_status(*info);
      runs.push_back(std::move(*info));
    }
    out.run_list(runs);
    return kExitOk;
  }

  // `extra` gets the run's id and its state ("run_status"), for `status --watch` and
  // `cancel --wait` to know when it ended.
  int status(const nlohmann::json& req, const PeerCredentials& who, const Output& out,
             nlohmann::json& extra) {
    auto run = find(text(req, "run"), who);
    auto state = run.ok() ? journal_.replay(run->id) : Result<RunState>(run.status());
    if (!state.ok()) {
      out.error(state.status().message());
      return run.ok() ? kExitError : kExitBadInput;
    }
    extra["run"] = run->id;
    extra["run_status"] = to_string(effective_status(*run));
    out.run_status(make_status_report(journal_, *run, *state, req.value("tasks", false),
                                      req.value("nodes", false)));
    return kExitOk;
  }

  // `extra` gets the run's id, for `cancel --wait` to follow it.
  int cancel(const nlohmann::json& req, const PeerCredentials& who, const Output& out,
             nlohmann::json& extra) {
    auto run = find(text(req, "run"), who);
    if (!run.ok()) {
      out.error(run.status().message());
      return kExitBadInput;
    }
    if (run->status != RunStatus::running) {
      out.run_already_ended(run->id, run->status);
      return kExitOk;
    }
    extra["run"] = run->id;  // only while it runs: there is something to wait for
    if (Status s = instance_.cancel(run->id); !s.ok()) {
      out.error(s.message());
      return exit_for(s);
    }
    out.run_cancelling(run->id, getpid());
    return kExitOk;
  }

  // The run's HTML report in `extra` ("html", with "run"): the client writes the file, where
  // its user may write.
  int report(const nlohmann::json& req, const PeerCredentials& who, const Output& out,
             nlohmann::json& extra) {
    auto run = find(text(req, "run"), who);
    if (!run.ok()) {
      out.error(run.status().message());
      return kExitBadInput;
    }
    auto events = journal_.events(run->id);
    if (!events.ok()) {
      out.error(events.status().message());
      return kExitError;
    }
    run->status = effective_status(*run);
    HtmlReportOptions options;
    options.end_time = run->status == RunStatus::running ? wall_seconds_now() : run->updated;
    extra["run"] = run->id;
    extra["html"] = render_html_report(*run, *events, options);
    return kExitOk;
  }

  int endpoints(const nlohmann::json& req, const PeerCredentials& who, const Output& out) {
    auto run = find(text(req, "run"), who);
    auto events =
        run.ok() ? journal_.events(run->id) : Result<std::vector<EventRecord>>(run.status());
    if (!events.ok()) {
      out.error(events.status().message());
      return run.ok() ? kExitError : kExitBadInput;
    }
    run->status = effective_status(*run);
    print_endpoints(out, *run, *events, req.value("env", false));
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

std::vector<AllowedPeer> allowed_peers(
    const std::map<std::string, std::vector<std::string>>& user_keys) {
  std::vector<AllowedPeer> peers;
  for (const auto& [user, list] : user_keys) {
    for (const std::string& k : list) peers.push_back({k, user});
  }
  return peers;
}

// The instance's TCP listener: its own CURVE pair (<state>/serve.key, made on first start and
// kept, so clients' copies of serve.pub stay valid) and every listed user key admitted with its
// user's name as the id. There is no unencrypted TCP: ServerSocket is CURVE only.
Result<std::unique_ptr<ServerSocket>> bind_tcp(
    const std::string& state, const std::string& listen,
    const std::map<std::string, std::vector<std::string>>& user_keys) {
  auto keys = read_key_pair(state, "serve");
  if (keys.status().code() == ErrorCode::not_found) {
    keys = generate_curve_keypair();
    if (!keys.ok()) return keys.status();
    if (Status s = write_key_pair(state, "serve", *keys); !s.ok()) return s;
  }
  if (!keys.ok()) return keys.status();
  ServerSocketOptions o;
  o.endpoint = listen;
  o.keys = *keys;
  o.max_message = kMaxFrame;
  o.allowed_peers = allowed_peers(user_keys);
  return ServerSocket::bind(o);
}

// SIGHUP: the config file is read again and its `keys` replace the TCP listener's (new
// handshakes only; a user no longer listed at all is refused on connections made before).
// A config with a mistake changes nothing (said with its file:line:col). The other settings
// apply at the next start: said when they changed.
void reload_keys(const std::string& config_path, const std::string& listen, ServerSocket* tcp,
                 std::set<std::string>& listed_users) {
  if (config_path.empty()) {
    std::fprintf(stderr, "chorus serve: SIGHUP: no --config to read again\n");
    return;
  }
  auto loaded = load_serve_config(config_path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "chorus serve: SIGHUP: %s; the keys stay as they were\n",
                 loaded.status().message().c_str());
    return;
  }
  if (loaded->listen != listen) {
    std::fprintf(stderr,
                 "chorus serve: SIGHUP: listen changed to '%s': that applies at the next start\n",
                 loaded->listen.c_str());
  }
  if (tcp == nullptr) {
    std::fprintf(stderr, "chorus serve: SIGHUP: no TCP listener: keys have nothing to admit\n");
    return;
  }
  if (Status st = tcp->set_allowed_peers(allowed_peers(loaded->user_keys)); !st.ok()) {
    std::fprintf(stderr, "chorus serve: SIGHUP: %s; the keys stay as they were\n",
                 st.message().c_str());
    return;
  }
  listed_users.clear();
  std::size_t count = 0;
  for (const auto& [user, list] : loaded->user_keys) {
    listed_users.insert(user);
    count += list.size();
  }
  std::fprintf(stderr,
               "chorus serve: SIGHUP: %zu key(s) of %zu user(s) from %s admitted from now on "
               "(weights, limits and admins apply at the next start)\n",
               count, listed_users.size(), config_path.c_str());
}

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "serve", "Run a long-lived instance that users submit workflows into (chorus submit)");
  struct Args {
    std::string state_dir;
    std::string config;
    std::string queue;
    std::string placement;
    int cores = 0;
    bool local = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--state", a->state_dir, "State folder (default: .chorus)");
  cmd->add_option("--config", a->config,
                  "serve.yaml: policies, cores, admins, weights per user and group, per-user "
                  "limits (docs/serve.md)");
  cmd->add_option("--queue", a->queue,
                  "Queue policy over every user's tasks (default: the "
                  "config's, else uwfq)");
  cmd->add_option("--placement", a->placement,
                  "Placement policy (default: the config's, else first-fit)");
  cmd->add_option("--cores", a->cores,
                  "Cores of this machine the instance hands out (default: the config's, else all)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--local", a->local,
                "Inside a Slurm allocation, serve this machine only (default there: every node "
                "of the allocation, through one agent per node)");
  cmd->callback([a] {
    const Output out = Output::for_command(false);
    const bool root = ::geteuid() == 0;
    ServeConfig config;
    if (!a->config.empty()) {
      auto loaded = load_serve_config(a->config);
      if (!loaded.ok()) {
        out.error(loaded.status().message());
        throw CLI::RuntimeError(exit_for(loaded.status()));
      }
      config = std::move(*loaded);
    }
    const std::string queue = !a->queue.empty()       ? a->queue
                              : !config.queue.empty() ? config.queue
                                                      : "uwfq";
    const std::string placement = !a->placement.empty()       ? a->placement
                                  : !config.placement.empty() ? config.placement
                                                              : "first-fit";
    // What the instance writes is its own: the journal holds every user's runs.
    ::umask(077);
    const std::string state = resolve_state_dir(a->state_dir);
    ::mkdir(state.c_str(), 0700);
    if (root) ::chmod(state.c_str(), 0711);  // users reach the socket, list nothing

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);                    // read the config's keys again
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before the coordinator's thread starts
    const int sigfd = signalfd(-1, &signals, SFD_CLOEXEC);

    const std::string path = state + "/serve.sock";
    auto socket = LocalServerSocket::bind(path, root ? 0666 : 0600, kMaxFrame);
    if (!socket.ok()) {
      out.error(socket.status().message());
      throw CLI::RuntimeError(socket.status().code() == ErrorCode::unavailable ? kExitBadInput
                                                                               : kExitError);
    }
    // Inside an allocation (sbatch -N 8 --wrap "chorus serve ..."): its nodes, through agents.
    std::unique_ptr<ExecutionBackend> backend;
    CancelToken lost;  // requested when every agent is lost: nothing can run any more
    if (config.slurm_allocation) {
      // Automatic allocation: pilot jobs through libslurm when work waits.
      const ServeSlurmAllocation& sa = *config.slurm_allocation;
      auto client = SlurmClient::open();
      auto part = client.ok() ? (*client)->partition(sa.partition)
                              : Result<SlurmPartitionInfo>(client.status());
      if (!part.ok()) {
        out.error(sa.at.format() + ": " + part.status().message());
        throw CLI::RuntimeError(part.status().code() == ErrorCode::not_found ? kExitBadInput
                                                                             : kExitError);
      }
      client->reset();
      PilotsBackendOptions po;
      po.partition = part->name;
      po.max_jobs = sa.max_jobs;
      po.nodes = sa.nodes;
      po.cores_per_node = std::max(1, part->cpus_per_node);
      po.walltime = sa.walltime;
      po.idle_timeout = sa.idle_timeout;
      backend = make_pilots_backend(po);
      std::fprintf(stderr,
                   "chorus serve: automatic allocation on partition %s: up to %d pilot jobs of %d "
                   "nodes (%d cores each)\n",
                   part->name.c_str(), sa.max_jobs, sa.nodes, po.cores_per_node);
      if (Status s = backend->start({&lost, state}); !s.ok()) {
        out.error(s.message());
        throw CLI::RuntimeError(kExitError);
      }
    } else if (std::getenv("SLURM_JOB_ID") != nullptr && !a->local) {
      auto alloc = read_slurm_allocation();
      if (!alloc.ok()) {
        out.error("cannot read the Slurm allocation: " + alloc.status().message() +
                  " (--local serves this machine only)");
        throw CLI::RuntimeError(kExitBadInput);
      }
      SlurmBackendOptions so;
      so.allocation = std::move(*alloc);
      so.on_all_lost = [&lost](const std::string& why) {
        std::fprintf(stderr,
                     "chorus serve: %s: nothing can run any more; stopping (the runs resume "
                     "when the instance starts again)\n",
                     why.c_str());
        lost.request();
      };
      std::fprintf(stderr,
                   "chorus serve: starting one agent on each of the allocation's %zu nodes\n",
                   so.allocation.nodes.size());
      backend = make_slurm_backend(std::move(so));
      if (Status s = backend->start({&lost, state}); !s.ok()) {
        out.error(s.message());
        throw CLI::RuntimeError(kExitError);
      }
    }
    ServedInstanceOptions options;
    options.backend = backend.get();
    options.state_dir = state;
    options.queue = queue;
    options.placement = placement;
    options.cores = a->cores > 0 ? a->cores : static_cast<int>(config.cores);
    options.access = ServeAccess(std::move(config));
    const std::string listen = options.access.config().listen;
    const auto user_keys = options.access.config().user_keys;
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
    std::unique_ptr<ServerSocket> tcp;
    if (!listen.empty()) {
      auto bound = bind_tcp(state, listen, user_keys);
      if (!bound.ok()) {
        out.error(bound.status().message());
        (*instance)->stop();
        throw CLI::RuntimeError(exit_for(bound.status()));
      }
      tcp = std::move(*bound);
    }
    std::fprintf(stderr, "chorus serve: listening on %s (queue %s, %s)\n", path.c_str(),
                 queue.c_str(), root ? "tasks run as their submitters" : "one user");
    if (tcp) {
      std::fprintf(stderr, "chorus serve: listening on %s (CURVE; clients need %s/serve.pub)\n",
                   tcp->endpoint().c_str(), state.c_str());
    }
    std::set<std::string> listed_users;  // users with a key (a connection of another is refused)
    for (const auto& [user, list] : user_keys) listed_users.insert(user);
    std::string peer, payload, key_user;
    while (true) {
      pollfd fds[3] = {{sigfd, POLLIN, 0}, {(*socket)->fd(), POLLIN, 0}, {-1, POLLIN, 0}};
      if (tcp) fds[2].fd = tcp->fd();
      (void)::poll(fds, tcp ? 3 : 2, 1000);
      if (fds[0].revents & POLLIN) {
        signalfd_siginfo info{};
        const bool got = ::read(sigfd, &info, sizeof info) == static_cast<ssize_t>(sizeof info);
        if (!got || info.ssi_signo != SIGHUP) break;
        reload_keys(a->config, listen, tcp.get(), listed_users);
      }
      if (lost.requests() > 0) break;
      // Both sockets' fds are edge-triggered: drain each until empty, and again while a send
      // may have consumed a signal (readable()).
      bool more = true;
      while (more) {
        more = false;
        while (true) {
          PeerCredentials who;
          auto got = (*socket)->receive(peer, payload, who);
          if (!got.ok()) {
            std::fprintf(stderr, "chorus serve: %s\n", got.status().message().c_str());
            break;
          }
          if (!*got) break;
          (void)(*socket)->send(peer, server.handle(payload, who));
          more = true;
        }
        while (tcp) {
          auto got = tcp->receive(peer, payload, &key_user);
          if (!got.ok()) {
            std::fprintf(stderr, "chorus serve: %s\n", got.status().message().c_str());
            break;
          }
          if (!*got) break;
          (void)tcp->send(peer, listed_users.count(key_user) != 0
                                    ? server.handle_tcp(payload, key_user)
                                    : server.refuse_unlisted(key_user));
          more = true;
        }
      }
    }
    std::fprintf(stderr, "chorus serve: stopping; the runs resume when it starts again\n");
    (*instance)->stop();
    if (backend) backend->stop();
  });
}

const CommandRegistrar registrar{"serve", add_serve_command};

}  // namespace
}  // namespace chorus::cli
