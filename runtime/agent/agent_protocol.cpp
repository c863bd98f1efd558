#include "runtime/agent/agent_protocol.hpp"

#include <chrono>
#include <cstring>

namespace chorus {
namespace {

constexpr std::size_t kHeaderSize = 2;

template <typename T>
void put(std::string& b, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  char raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  b.append(raw, sizeof(T));
}

void put_str(std::string& b, std::string_view s) {
  put<std::uint32_t>(b, static_cast<std::uint32_t>(s.size()));
  b.append(s);
}

void put_header(std::string& b, AgentMessage type) {
  b.push_back(static_cast<char>(kAgentProtocolVersion));
  b.push_back(static_cast<char>(type));
}

// Reads fields in order; once a read fails every later one fails too.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  template <typename T>
  bool get(T& v) {
    if (!ok_ || data_.size() - pos_ < sizeof(T)) return ok_ = false;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool str(std::string& s) {
    std::uint32_t n = 0;
    if (!get(n) || data_.size() - pos_ < n) return ok_ = false;
    s.assign(data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == data_.size(); }
  bool ok() const { return ok_; }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

Reader body(std::string_view payload) {
  return Reader(payload.size() >= kHeaderSize ? payload.substr(kHeaderSize) : std::string_view{});
}

void put_pairs(std::string& b, const KeyValues& a, const KeyValues& c, const KeyValues& d) {
  put<std::uint32_t>(b, static_cast<std::uint32_t>(a.size() + c.size() + d.size()));
  for (const KeyValues* kv : {&a, &c, &d}) {
    for (const auto& [k, v] : *kv) {
      put_str(b, k);
      put_str(b, v);
    }
  }
}

void put_command(std::string& b, const Command& cmd) {
  put<std::uint32_t>(b, static_cast<std::uint32_t>(cmd.argv.size()));
  for (const auto& a : cmd.argv) put_str(b, a);
  put_str(b, cmd.shell);
}

// Bounds the element counts a message may claim before anything is allocated for them.
bool plausible_count(std::uint32_t n, std::string_view payload) {
  return n <= payload.size();
}

}  // namespace

std::string encode_hello(const AgentHello& hello) {
  std::string b;
  put_header(b, AgentMessage::hello);
  put_str(b, hello.node);
  put<std::int32_t>(b, hello.capacity.cores);
  put<std::int64_t>(b, hello.capacity.memory_mb);
  put<std::int32_t>(b, hello.capacity.gpus);
  put<std::int64_t>(b, hello.pid);
  put_str(b, hello.log_dir);
  return b;
}

std::string encode_welcome(const AgentWelcome& w) {
  std::string b;
  put_header(b, AgentMessage::welcome);
  put(b, w.heartbeat_ms);
  put(b, w.silence_ms);
  put(b, w.kill_grace_ms);
  return b;
}

std::string encode_refused(std::string_view reason) {
  std::string b;
  put_header(b, AgentMessage::refused);
  put_str(b, reason);
  return b;
}

std::string encode_leaving(std::string_view reason) {
  std::string b;
  put_header(b, AgentMessage::leaving);
  put_str(b, reason);
  return b;
}

std::string encode_refused_for(std::uint8_t version, std::string_view reason) {
  std::string b = encode_refused(reason);
  b[0] = static_cast<char>(version);
  return b;
}

std::string encode_telemetry(const AgentTelemetry& t) {
  std::string b;
  put_header(b, AgentMessage::telemetry);
  put(b, t.targets_generation);
  for (double v : {t.rx_Bps, t.tx_Bps, t.backlog_bytes, t.drops_per_s, t.running_cores, t.child_cpu,
                   t.cpu_quota, t.rx_capacity_Bps, t.tx_capacity_Bps}) {
    put(b, v);
  }
  put<std::uint32_t>(b, static_cast<std::uint32_t>(t.links.size()));
  for (const LinkTelemetry& l : t.links) {
    put(b, l.rtt_s);
    put(b, l.down_Bps);
    put(b, l.up_Bps);
    put(b, l.age_s);
    put(b, l.tcp_rtt_s);
  }
  return b;
}

std::string encode_probe_targets(std::uint32_t generation, std::span<const DataSource> sources) {
  std::string b;
  put_header(b, AgentMessage::probe_targets);
  put(b, generation);
  put<std::uint32_t>(b, static_cast<std::uint32_t>(sources.size()));
  for (const DataSource& s : sources) {
    put_str(b, s.name);
    put_str(b, s.host);
    put<std::int32_t>(b, s.port);
    put<std::uint8_t>(b, static_cast<std::uint8_t>(s.probe));
  }
  return b;
}

std::string encode_empty(AgentMessage type) {
  std::string b;
  put_header(b, type);
  return b;
}

void begin_batch(std::string& buffer, AgentMessage type) {
  buffer.clear();
  put_header(buffer, type);
}

void append_launch(std::string& b, const LaunchRequest& r) {
  append_launch(b, r, r.stdout_path, r.stderr_path);
}

void append_launch(std::string& b, const LaunchRequest& r, std::string_view stdout_path,
                   std::string_view stderr_path) {
  const TaskSpec& spec = *r.spec;
  put<std::uint32_t>(b, spec.id);
  put<std::uint32_t>(b, r.attempt);
  put_str(b, spec.name);
  put_command(b, spec.cmd);
  put_pairs(b, spec.env, spec.params, r.env);
  put_str(b, r.workdir);
  put_str(b, stdout_path);
  put_str(b, stderr_path);
  put<std::int64_t>(b, std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout).count());
  // The cores this node holds for it: its share of a spread MPI task, else the whole task's.
  int cores = spec.total().cores;
  if (!r.spread.empty()) {
    cores = 0;
    for (const NodeRanks& n : r.spread) {
      if (n.node == r.node) cores += spec.per_rank.cores * n.ranks;
    }
  }
  put<std::int32_t>(b, cores);
}

void append_launch(std::string& b, const TaskLaunch& l) {
  put<std::uint32_t>(b, l.task);
  put<std::uint32_t>(b, l.attempt);
  put_str(b, l.name);
  put_command(b, l.cmd);
  put_pairs(b, l.env, {}, {});
  put_str(b, l.workdir);
  put_str(b, l.stdout_path);
  put_str(b, l.stderr_path);
  put<std::int64_t>(b, l.timeout_ms);
  put<std::int32_t>(b, l.cores);
}

void append_update(std::string& b, const StateUpdate& u) {
  put<std::uint32_t>(b, u.task);
  put<std::uint32_t>(b, u.attempt);
  put<std::uint8_t>(b, static_cast<std::uint8_t>(u.kind));
  put<std::int32_t>(b, u.exit_code);
  put<std::int32_t>(b, u.signal);
  put_str(b, u.message);
  put<double>(b, u.end_time);
}

void append_task_ref(std::string& b, TaskRef ref) {
  put<std::uint32_t>(b, ref.task);
  put<std::uint32_t>(b, ref.attempt);
}

std::string encode_fetch(AgentMessage type, const FetchRequest& f) {
  std::string b;
  put_header(b, type);
  put(b, f.request);
  put_str(b, f.node);
  put_str(b, f.path);
  put(b, f.offset);
  put(b, f.max);
  return b;
}

std::string encode_fetched(const FetchReply& f) {
  std::string b;
  put_header(b, AgentMessage::fetched);
  put(b, f.request);
  put<std::uint8_t>(b, f.ok ? 1 : 0);
  put_str(b, f.message);
  put(b, f.size);
  put(b, f.offset);
  put_str(b, f.data);
  return b;
}

std::string encode_output(const OutputChunk& c) {
  std::string b;
  put_header(b, AgentMessage::output);
  put<std::uint32_t>(b, c.task);
  put(b, c.attempt);
  put(b, c.stream);
  put<std::uint8_t>(b, c.first ? 1 : 0);
  put_str(b, c.note);
  put_str(b, c.data);
  return b;
}

MessageHeader message_type(std::string_view payload) {
  MessageHeader h;
  if (payload.size() < kHeaderSize) return h;
  h.version = static_cast<std::uint8_t>(payload[0]);
  auto t = static_cast<std::uint8_t>(payload[1]);
  h.ok = h.version == kAgentProtocolVersion && t >= 1 && t <= kLastAgentMessage;
  h.type = static_cast<AgentMessage>(t);
  return h;
}

bool decode_hello(std::string_view payload, AgentHello& out) {
  Reader r = body(payload);
  std::int32_t cores = 0;
  std::int32_t gpus = 0;
  r.str(out.node);
  r.get(cores);
  r.get(out.capacity.memory_mb);
  r.get(gpus);
  r.get(out.pid);
  r.str(out.log_dir);
  out.capacity.cores = cores;
  out.capacity.gpus = gpus;
  return r.ok() && r.at_end();
}

bool decode_welcome(std::string_view payload, AgentWelcome& out) {
  Reader r = body(payload);
  r.get(out.heartbeat_ms);
  r.get(out.silence_ms);
  r.get(out.kill_grace_ms);
  return r.ok() && r.at_end();
}

bool decode_refused(std::string_view payload, std::string& reason) {
  Reader r = body(payload);
  r.str(reason);
  return r.ok() && r.at_end();
}

bool decode_leaving(std::string_view payload, std::string& reason) {
  return decode_refused(payload, reason);
}

bool decode_launches(std::string_view payload, std::vector<TaskLaunch>& out) {
  Reader r = body(payload);
  while (r.ok() && !r.at_end()) {
    TaskLaunch l;
    std::uint32_t n = 0;
    r.get(l.task);
    r.get(l.attempt);
    r.str(l.name);
    if (!r.get(n) || !plausible_count(n, payload)) return false;
    l.cmd.argv.resize(n);
    for (auto& a : l.cmd.argv) r.str(a);
    r.str(l.cmd.shell);
    if (!r.get(n) || !plausible_count(n, payload)) return false;
    l.env.resize(n);
    for (auto& [k, v] : l.env) {
      r.str(k);
      r.str(v);
    }
    r.str(l.workdir);
    r.str(l.stdout_path);
    r.str(l.stderr_path);
    r.get(l.timeout_ms);
    r.get(l.cores);
    if (r.ok()) out.push_back(std::move(l));
  }
  return r.ok();
}

bool decode_updates(std::string_view payload, std::vector<StateUpdate>& out) {
  Reader r = body(payload);
  while (r.ok() && !r.at_end()) {
    StateUpdate u;
    std::uint8_t kind = 0;
    r.get(u.task);
    r.get(u.attempt);
    r.get(kind);
    r.get(u.exit_code);
    r.get(u.signal);
    r.str(u.message);
    r.get(u.end_time);
    if (kind > static_cast<std::uint8_t>(UpdateKind::lost)) return false;
    u.kind = static_cast<UpdateKind>(kind);
    if (r.ok()) out.push_back(std::move(u));
  }
  return r.ok();
}

bool decode_task_refs(std::string_view payload, std::vector<TaskRef>& out) {
  Reader r = body(payload);
  while (r.ok() && !r.at_end()) {
    TaskRef ref;
    r.get(ref.task);
    r.get(ref.attempt);
    if (r.ok()) out.push_back(ref);
  }
  return r.ok();
}

}  // namespace chorus

namespace chorus {

bool decode_fetch(std::string_view payload, FetchRequest& out) {
  Reader r = body(payload);
  r.get(out.request);
  r.str(out.node);
  r.str(out.path);
  r.get(out.offset);
  r.get(out.max);
  return r.ok() && r.at_end();
}

bool decode_fetched(std::string_view payload, FetchReply& out) {
  Reader r = body(payload);
  std::uint8_t ok = 0;
  r.get(out.request);
  r.get(ok);
  r.str(out.message);
  r.get(out.size);
  r.get(out.offset);
  r.str(out.data);
  out.ok = ok != 0;
  return r.ok() && r.at_end() && ok <= 1;
}

bool decode_output(std::string_view payload, OutputChunk& out) {
  Reader r = body(payload);
  std::uint8_t first = 0;
  std::uint32_t task = 0;
  r.get(task);
  r.get(out.attempt);
  r.get(out.stream);
  r.get(first);
  r.str(out.note);
  r.str(out.data);
  out.task = task;
  out.first = first != 0;
  return r.ok() && r.at_end() && out.stream <= 1 && first <= 1;
}

bool decode_telemetry(std::string_view payload, AgentTelemetry& out) {
  Reader r = body(payload);
  r.get(out.targets_generation);
  for (double* v :
       {&out.rx_Bps, &out.tx_Bps, &out.backlog_bytes, &out.drops_per_s, &out.running_cores,
        &out.child_cpu, &out.cpu_quota, &out.rx_capacity_Bps, &out.tx_capacity_Bps}) {
    r.get(*v);
  }
  std::uint32_t n = 0;
  // Each link is five doubles: a count the payload cannot hold is refused before allocating.
  if (!r.get(n) || n > kMaxProbeTargets || n > payload.size() / (5 * sizeof(double))) {
    return false;
  }
  out.links.resize(n);
  for (LinkTelemetry& l : out.links) {
    r.get(l.rtt_s);
    r.get(l.down_Bps);
    r.get(l.up_Bps);
    r.get(l.age_s);
    r.get(l.tcp_rtt_s);
  }
  return r.ok() && r.at_end();
}

bool decode_probe_targets(std::string_view payload, ProbeTargets& out) {
  Reader r = body(payload);
  r.get(out.generation);
  std::uint32_t n = 0;
  if (!r.get(n) || n > kMaxProbeTargets || !plausible_count(n, payload)) return false;
  out.sources.resize(n);
  for (DataSource& s : out.sources) {
    std::int32_t port = 0;
    std::uint8_t probe = 0;
    r.str(s.name);
    r.str(s.host);
    r.get(port);
    r.get(probe);
    if (!r.ok() || port < 0 || port > 65535 ||
        probe > static_cast<std::uint8_t>(SourceProbe::none)) {
      return false;
    }
    s.port = port;
    s.probe = static_cast<SourceProbe>(probe);
    s.line = s.column = 0;
  }
  return r.ok() && r.at_end();
}

}  // namespace chorus
