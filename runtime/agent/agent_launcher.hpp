// AgentLauncher: the coordinator's side of the agents. A Launcher that runs each task on the
// agent of the node placement chose (LaunchRequest::node), over one CURVE-encrypted ZeroMQ
// ROUTER socket.
//
// Design assumptions:
// - Batching: launch() only appends the task to its node's buffer; flush() (called once per
//   coordinator round) sends one message per agent. Agents batch their state updates the same
//   way, so a round of 5,000 launches costs a handful of messages, not 5,000.
// - Keys: start() generates a fresh CURVE key pair for the coordinator and one per agent: a
//   folder key_dir/<node>/ for each of `agent_nodes`, key_dir/agent-K/ for each of `agent_slots`
//   (0700/0600; see curve_keys.hpp). Each key is bound to its node: an agent presenting n1's key
//   but registering as n2 is refused; a slot's key is bound to the first node name that
//   registers with it. With neither set, one pair is shared by all agents (any name). The
//   destructor removes the folder (it holds secret keys).
// - Node-local output: an agent that registers with a log_dir (chorus agent --node-logs) gets
//   its tasks' output files there (<log_dir>/<run id>/<file name>; services excepted), and the
//   launcher notes the folder in <shared log folder>/.node-logs for `chorus logs`. It serves
//   fetches from `chorus logs` on control_endpoint() (ipc://, in the 0700 key folder, CURVE with
//   the key folder's .control pair): each request is forwarded to the node's agent and its reply
//   relayed, without ever waiting in the coordinator's loop. A failed attempt's output is pushed
//   by its agent before the failure and written to the shared paths the coordinator asked for,
//   so the summary's stderr tail and `chorus logs` work for failures after the agents are gone.
// - Liveness: each side sends a heartbeat when it has sent nothing for `heartbeat`; an agent
//   silent for `lost_after` is declared lost: each of its tasks gets UpdateKind::lost (the
//   coordinator retries it if it has retries left) and node_alive() turns false, which
//   LiveNodePlacement (live_node_placement.hpp) turns into "not now" for that node. Messages
//   that still arrive from a lost agent are answered with shutdown: its tasks were given away.
// - Agents exit on their own when the coordinator is silent for `agent_silence`.
// - Telemetry: each agent sends its node's figures (AgentTelemetry) at the heartbeat cadence;
//   the last one of each agent is kept (also once it is lost: its age tells). The probe targets
//   go to every live agent when set_probe_targets() is called and to each later registration.
//
// Threading: like every Launcher, one thread (the coordinator's). The ZAP handler that checks
// peers' keys runs on a thread of the transport.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/data_movement.hpp"
#include "core/node_info.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/netprobe/agent_telemetry.hpp"
#include "runtime/transport/curve_keys.hpp"

namespace chorus {

class ServerSocket;

struct AgentLauncherOptions {
  std::string listen = "tcp://127.0.0.1:*";  // tcp://IP:PORT; PORT * = any free port
  std::string key_dir;                       // required: where agents find their keys
  std::vector<std::string> agent_nodes;      // one key pair per node, bound to its name
  std::size_t agent_slots = 0;               // key pairs for agents of names not known yet
  Duration heartbeat = std::chrono::seconds(1);
  Duration lost_after = std::chrono::seconds(10);     // an agent silent this long is lost
  Duration agent_silence = std::chrono::seconds(10);  // agents exit after this much silence
  Duration kill_grace = std::chrono::seconds(5);      // agents' SIGTERM -> SIGKILL
  // Called (once) when the last live agent is lost after the run started; nothing can run then.
  std::function<void(const std::string& why)> on_all_lost;
};

// One registered agent, for status output and tests.
struct AgentInfo {
  NodeInfo node;
  std::int64_t pid = 0;
  bool alive = true;
  std::size_t running = 0;  // tasks handed to it whose final update has not been polled
};

class AgentLauncher final : public Launcher {
 public:
  // Generates the keys, writes the key folder and binds. Errors: those of the key folder and of
  // ServerSocket::bind ("cannot listen on tcp://10.0.0.1:5555: Address already in use").
  static Result<std::unique_ptr<AgentLauncher>> start(AgentLauncherOptions options);
  ~AgentLauncher() override;
  AgentLauncher(const AgentLauncher&) = delete;
  AgentLauncher& operator=(const AgentLauncher&) = delete;

  std::string_view name() const override { return "agents"; }
  const std::string& endpoint() const { return endpoint_; }
  const std::string& key_dir() const { return options_.key_dir; }
  // ipc://<key_dir>/control.sock, or empty when that path is too long for a Unix socket.
  const std::string& control_endpoint() const { return control_endpoint_; }

  // Called while waiting for agents (every 100 ms at least); a non-ok Status ends the wait with
  // it (e.g. the process that starts the agents has died).
  using WaitWatch = std::function<Status()>;

  // Serves registrations until an agent has registered for every name in `nodes`, then admits
  // only those names (an agent of another name is refused). Errors: unavailable after `timeout`,
  // naming the missing nodes; cancelled when `cancel` is requested; what `watch` returns.
  // Returns the nodes in the order given, with the capacity each agent reported.
  Result<std::vector<NodeInfo>> wait_for_nodes(const std::vector<std::string>& nodes,
                                               Duration timeout, CancelToken* cancel = nullptr,
                                               const WaitWatch& watch = {});
  // The same for the first `count` agents of any (distinct) names, in registration order.
  Result<std::vector<NodeInfo>> wait_for_count(std::size_t count, Duration timeout,
                                               CancelToken* cancel = nullptr,
                                               const WaitWatch& watch = {});

  bool node_alive(std::string_view node) const;
  // How many agents were declared lost so far: a reader that remembers it knows at one compare
  // whether any node_alive() answer may have changed.
  std::uint64_t losses() const { return losses_; }
  std::vector<AgentInfo> agents() const;
  // Handshakes refused because the peer's key is not this run's (see ServerSocket::refused).
  std::size_t refused_peers() const;
  // Tells every live agent to stop its tasks and exit. Idempotent; the destructor does it too.
  void shutdown_agents();

  // What the agents probe from now on (the run's data sources, in SourceId order): sent to
  // every live agent now and to each agent that registers later, under a new generation.
  void set_probe_targets(std::span<const DataSource> sources);
  // The generation of the last set_probe_targets() (0 = never called).
  std::uint32_t probe_generation() const { return probe_generation_; }
  // Bumped by every telemetry message taken from any agent: nothing changed while it holds.
  std::uint64_t telemetry_serial() const { return telemetry_serial_; }
  struct NodeTelemetry {
    const AgentTelemetry* last = nullptr;  // null: none arrived from this node's agent
    std::uint64_t serial = 0;              // telemetry_serial() when it arrived
  };
  // The last telemetry of the node's current (or, lost, its last) agent. Valid until the next
  // poll().
  NodeTelemetry node_telemetry(const std::string& node) const;

  // Errors: unavailable when the node's agent is lost or was never registered; invalid_argument
  // for a task that is not an executable/service with a command.
  Result<LaunchHandle> launch(const LaunchRequest& request) override;
  void flush() override;
  void poll(std::vector<StateUpdate>& out) override;
  Status cancel(LaunchHandle handle) override;
  int wait_fd() const override;
  std::optional<TimePoint> next_deadline() const override;
  std::size_t in_flight() const override { return in_flight_.size(); }

 private:
  struct Agent {
    std::string peer;  // the ROUTER identity of its connection
    AgentInfo info;
    TimePoint last_heard{};
    TimePoint last_sent{};
    std::string batch;         // launches buffered until flush()
    std::string log_dir;       // node-local output folder, empty when none
    std::string noted_in;      // the shared log folder whose .node-logs names this node already
    AgentTelemetry telemetry;  // the last one received
    std::uint64_t telemetry_serial = 0;  // 0 = none yet
  };
  // A `chorus logs` fetch waiting for an agent's reply.
  struct PendingFetch {
    std::string client;  // the control connection's identity
    std::uint64_t client_request = 0;
    std::size_t agent = 0;
    std::uint64_t offset = 0;
    std::uint32_t max = 0;
  };
  struct SharedPaths {
    std::string out;
    std::string err;
  };

  explicit AgentLauncher(AgentLauncherOptions options);
  void serve();  // takes every waiting message
  void on_message(const std::string& peer, const std::string& payload, const std::string& user);
  void on_hello(const std::string& peer, const std::string& payload, const std::string& user);
  void on_control(const std::string& peer, const std::string& payload);
  void on_fetched(std::size_t agent, const std::string& payload);
  void on_output(std::size_t agent, const std::string& payload);
  void on_telemetry(std::size_t agent, const std::string& payload);
  void note_node_logs(Agent& a, const std::string& shared_dir, const std::string& node_dir);
  void fail_fetches(std::size_t agent, const std::string& why);
  void check_liveness(TimePoint now);
  void declare_lost(std::size_t agent, const std::string& why);
  bool send_to(std::size_t agent, const std::string& payload);
  Result<std::vector<NodeInfo>> wait_until(const std::function<bool()>& done, Duration timeout,
                                           CancelToken* cancel,
                                           const std::function<std::string()>& missing,
                                           const WaitWatch& watch);

  AgentLauncherOptions options_;
  std::unique_ptr<ServerSocket> socket_;
  std::string endpoint_;
  std::string control_endpoint_;
  std::vector<Agent> agents_;
  // Slot keys (user id "slot:agent-K") -> the node name each was bound to at registration.
  std::unordered_map<std::string, std::string> slot_nodes_;
  std::unordered_map<std::uint64_t, PendingFetch> fetches_;
  std::uint64_t next_fetch_ = 0;
  // Failed attempts' output is written here (node-local tasks only), until the final update.
  std::unordered_map<LaunchHandle, SharedPaths> collect_;
  std::unordered_map<std::string, bool> control_noted_;   // shared log folders given the endpoint
  std::unordered_map<std::string, std::size_t> by_peer_;  // live connections only
  std::unordered_map<std::string, std::size_t> by_node_;  // the current agent of each node
  std::vector<std::string> expected_;                     // admitted names once frozen
  bool frozen_ = false;
  bool all_lost_reported_ = false;
  bool more_input_ = false;  // a send consumed the fd's edge while messages were waiting
  // In-flight tasks by handle ((task << 32) | attempt: unique for a launcher's life).
  std::unordered_map<LaunchHandle, std::size_t> in_flight_;  // -> agent index
  std::vector<StateUpdate> pending_;  // final updates received or made up, for the next poll()
  std::string payload_;
  std::string peer_;
  std::string user_;
  std::string address_;  // of the message being served (Peer-Address)
  std::vector<StateUpdate> decoded_;
  std::string probe_targets_;  // the encoded probe_targets message; empty = none set
  std::uint32_t probe_generation_ = 0;
  std::uint64_t telemetry_serial_ = 0;
  std::uint64_t losses_ = 0;
  AgentTelemetry telemetry_in_;  // decoded into, then swapped with the agent's
};

}  // namespace chorus
