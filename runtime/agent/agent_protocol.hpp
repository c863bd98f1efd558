// The messages between the coordinator and its agents, and their binary encoding.
//
// Each ZeroMQ message is one payload: [version u8][type u8] then the type's fields. Integers are
// little-endian fixed width, strings a u32 length then the bytes. Batches (launches, updates,
// cancels) are records back to back until the end of the payload: the sender appends records to
// a buffer as the coordinator hands tasks over, without knowing the count in advance, and the
// whole batch costs one ZeroMQ message (one CURVE box) instead of one per task.
//
// Why hand-written and not JSON or protobuf: no schema compiler or extra library, no text
// escaping of command lines and environments, and a decoder that checks every length against
// the payload so a malformed or hostile message is refused, never read past its end.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/launcher.hpp"
#include "core/data_movement.hpp"
#include "core/resources.hpp"
#include "core/task_spec.hpp"
#include "runtime/netprobe/agent_telemetry.hpp"

namespace chorus {

// Version 3 (issue 14): TaskLaunch::cores, the telemetry and probe_targets messages.
// Version 4: telemetry carries the node's link capacities and each link's TCP RTT.
inline constexpr std::uint8_t kAgentProtocolVersion = 4;

enum class AgentMessage : std::uint8_t {
  hello = 1,      // agent -> coordinator: registration (AgentHello)
  welcome = 2,    // coordinator -> agent: accepted (AgentWelcome)
  refused = 3,    // coordinator -> agent: registration refused (a reason string); agent exits
  heartbeat = 4,  // both ways, no fields
  launch = 5,     // coordinator -> agent: TaskLaunch records
  updates = 6,    // agent -> coordinator: StateUpdate records
  cancel = 7,     // coordinator -> agent: (task, attempt) records
  shutdown = 8,   // coordinator -> agent: stop every task and exit
  // Node-local output (AgentHello::log_dir not empty):
  fetch = 9,           // coordinator -> agent: read a piece of an output file (FetchRequest)
  fetched = 10,        // agent -> coordinator -> `chorus logs`: the piece (FetchReply)
  output = 11,         // agent -> coordinator: a failed attempt's output, pushed (OutputChunk)
  control_fetch = 12,  // `chorus logs` -> coordinator: fetch from a node (FetchRequest + node)
  // Telemetry (runtime/netprobe/, docs/telemetry.md):
  telemetry = 13,      // agent -> coordinator: AgentTelemetry, at the heartbeat cadence
  probe_targets = 14,  // coordinator -> agent: ProbeTargets, on welcome and when they change
  // agent -> coordinator: it is stopping (a reason string): every task it was sent is lost, and
  // nothing more is placed on it. A coordinator of an earlier build ignores it (a type it does
  // not know) and finds the agent lost by its silence instead.
  leaving = 15,
};
inline constexpr std::uint8_t kLastAgentMessage = 15;

// The most probe targets (a run's data sources) one message carries: bounds what a decoder
// allocates for a hostile count.
inline constexpr std::uint32_t kMaxProbeTargets = 4096;

// The largest piece one fetch returns, and the most of a failed attempt's stream an agent pushes
// (its end: where the error is). Bounds every message and every write of the coordinator.
inline constexpr std::uint32_t kFetchChunk = 1U << 20;
inline constexpr std::uint64_t kCollectLimit = 16ULL << 20;

struct AgentHello {
  std::string node;  // the name placement uses (a Slurm node name, or given with --node)
  Resources capacity;
  std::int64_t pid = 0;
  // Where this node keeps task output (absolute, %n already expanded), or empty: tasks write
  // where the coordinator says (the run's log folder, shared). When set, the coordinator sends
  // <log_dir>/<run id>/<file name of the shared path> instead, except for services (their
  // stdout probe reads the shared file).
  std::string log_dir;
};

// A read of [offset, offset + max) of one output file on a node. `node` is set only between
// `chorus logs` and the coordinator; `request` is the asker's id, echoed in the reply.
struct FetchRequest {
  std::uint64_t request = 0;
  std::string node;
  std::string path;
  std::uint64_t offset = 0;
  std::uint32_t max = kFetchChunk;
};

// ok: `data` is the file's bytes from `offset` (at most the request's max; empty at the end),
// `size` the file's size when read. Not ok: `message` says why ("no such file", "agent lost").
struct FetchReply {
  std::uint64_t request = 0;
  bool ok = false;
  std::string message;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
  std::string data;
};

// A piece of a failed attempt's stream, pushed before the attempt's update so the coordinator
// has it in the shared folder when it learns of the failure. `first` starts the file (with
// `note` at its top when the start of the stream was left on the node).
struct OutputChunk {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  std::uint8_t stream = 0;  // 0 stdout, 1 stderr
  bool first = false;
  std::string note;
  std::string data;
};

struct AgentWelcome {
  std::uint32_t heartbeat_ms = 1000;   // how often each side sends a heartbeat when idle
  std::uint32_t silence_ms = 30000;    // the agent exits when the coordinator is silent this long
  std::uint32_t kill_grace_ms = 5000;  // SIGTERM -> SIGKILL for timeouts and cancels
};

// One task as the agent runs it: the environment is already merged (spec env, params, then the
// request's CHORUS_* variables; later entries win).
struct TaskLaunch {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
  std::string name;
  Command cmd;
  KeyValues env;
  std::string workdir;
  std::string stdout_path;
  std::string stderr_path;
  std::int64_t timeout_ms = 0;  // 0 = none
  std::int32_t cores = 0;       // the cores it holds on this node (the agent's running cores)
};

// What the agents probe (NodeFactsSource::set_probe_targets): the run's data sources, in
// SourceId order, and a generation number the agent echoes in AgentTelemetry so links of an
// older list are never read against a newer one. DataSource::line/column are not sent.
struct ProbeTargets {
  std::uint32_t generation = 0;
  std::vector<DataSource> sources;
};

struct TaskRef {
  TaskId task = kNoTask;
  std::uint32_t attempt = 0;
};

// Encoding. Each begin_* writes a header into an empty buffer; append_* adds one record.
std::string encode_hello(const AgentHello& hello);
std::string encode_welcome(const AgentWelcome& welcome);
std::string encode_refused(std::string_view reason);
std::string encode_leaving(std::string_view reason);
// A refusal a peer of protocol `version` can read: `refused` has had the same layout (a reason
// string) in every version, so only the header's version byte is the peer's.
std::string encode_refused_for(std::uint8_t version, std::string_view reason);
std::string encode_empty(AgentMessage type);  // heartbeat, shutdown
void begin_batch(std::string& buffer, AgentMessage type);
// Appends the task of `request` as the agent will run it.
void append_launch(std::string& buffer, const LaunchRequest& request);
void append_launch(std::string& buffer, const TaskLaunch& launch);
void append_update(std::string& buffer, const StateUpdate& update);
void append_task_ref(std::string& buffer, TaskRef ref);
// As append_launch(request), with the output files replaced (node-local output).
void append_launch(std::string& buffer, const LaunchRequest& request, std::string_view stdout_path,
                   std::string_view stderr_path);
std::string encode_fetch(AgentMessage type, const FetchRequest& request);  // fetch, control_fetch
std::string encode_fetched(const FetchReply& reply);
std::string encode_output(const OutputChunk& chunk);
std::string encode_telemetry(const AgentTelemetry& telemetry);
std::string encode_probe_targets(std::uint32_t generation, std::span<const DataSource> sources);

// Decoding. message_type() checks the version; the decoders fail (false) on a truncated or
// malformed payload.
struct MessageHeader {
  bool ok = false;
  std::uint8_t version = 0;
  AgentMessage type = AgentMessage::heartbeat;
};
MessageHeader message_type(std::string_view payload);
bool decode_hello(std::string_view payload, AgentHello& out);
bool decode_welcome(std::string_view payload, AgentWelcome& out);
bool decode_refused(std::string_view payload, std::string& reason);
bool decode_leaving(std::string_view payload, std::string& reason);  // refused's layout
bool decode_launches(std::string_view payload, std::vector<TaskLaunch>& out);
bool decode_updates(std::string_view payload, std::vector<StateUpdate>& out);
bool decode_task_refs(std::string_view payload, std::vector<TaskRef>& out);
bool decode_fetch(std::string_view payload, FetchRequest& out);
bool decode_fetched(std::string_view payload, FetchReply& out);
bool decode_output(std::string_view payload, OutputChunk& out);
// At most kMaxProbeTargets links / sources; a probe kind or port out of range is refused.
bool decode_telemetry(std::string_view payload, AgentTelemetry& out);
bool decode_probe_targets(std::string_view payload, ProbeTargets& out);

}  // namespace chorus
