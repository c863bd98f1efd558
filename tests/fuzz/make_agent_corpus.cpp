// Writes the seed corpus of fuzz_agent_message: one file per message, each produced by the
// protocol's own encode_* / append_* functions (so the seeds are what agents really exchange).
//   build-fuzz/tests/fuzz/fuzz_make_agent_corpus tests/fuzz/corpus/agent_message
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/agent/agent_protocol.hpp"

namespace {

using namespace chorus;

TaskLaunch launch(TaskId id, bool shell) {
  TaskLaunch l;
  l.task = id;
  l.attempt = 1 + id % 3;
  l.name = "sim-" + std::to_string(id);
  if (shell) {
    l.cmd.shell = "echo $CHORUS_TASK >> out.log && sleep 0.1";
  } else {
    l.cmd.argv = {"./heat_solver", "--steps", std::to_string(100 * id)};
  }
  l.env = {{"CHORUS_RUN_ID", "longrun-1"}, {"CHORUS_TASK", l.name}, {"OMP_NUM_THREADS", "2"}};
  l.workdir = "/scratch/run";
  l.stdout_path = "/scratch/run/logs/" + l.name + ".out";
  l.stderr_path = "/scratch/run/logs/" + l.name + ".err";
  l.timeout_ms = id % 2 ? 60000 : 0;
  l.cores = 1 + static_cast<int>(id % 4);
  return l;
}

StateUpdate update(TaskId id, UpdateKind kind, int code, int signal, const char* message) {
  StateUpdate u;
  u.task = id;
  u.attempt = 1;
  u.kind = kind;
  u.exit_code = code;
  u.signal = signal;
  u.message = message;
  u.end_time = 1764620000.25 + id;
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> out;

  AgentHello hello;
  hello.node = "node-01";
  hello.capacity.cores = 48;
  hello.capacity.memory_mb = 128000;
  hello.capacity.gpus = 2;
  hello.pid = 4242;
  out.emplace_back("hello", encode_hello(hello));
  hello.log_dir = "/local/chorus-logs/node-01";
  hello.capacity.gpus = 0;
  out.emplace_back("hello_log_dir", encode_hello(hello));
  out.emplace_back("welcome", encode_welcome(AgentWelcome{}));
  out.emplace_back("welcome_fast", encode_welcome(AgentWelcome{50, 500, 100}));
  out.emplace_back("refused", encode_refused("agent protocol 1, coordinator speaks 2"));
  out.emplace_back("heartbeat", encode_empty(AgentMessage::heartbeat));
  out.emplace_back("shutdown", encode_empty(AgentMessage::shutdown));

  std::string b;
  begin_batch(b, AgentMessage::launch);
  append_launch(b, launch(0, false));
  out.emplace_back("launch_one", b);
  append_launch(b, launch(1, true));
  append_launch(b, launch(2, false));
  out.emplace_back("launch_three", b);

  b.clear();
  begin_batch(b, AgentMessage::updates);
  append_update(b, update(0, UpdateKind::exited, 0, 0, ""));
  out.emplace_back("updates_one", b);
  append_update(b, update(1, UpdateKind::exited, 0, 9, "killed by signal 9"));
  append_update(b, update(2, UpdateKind::timed_out, 0, 15, "timed out after 60 s"));
  append_update(b, update(3, UpdateKind::lost, 0, 0, "node lost"));
  append_update(b, update(4, UpdateKind::cancelled, 1, 0, "cancelled"));
  out.emplace_back("updates_five", b);

  b.clear();
  begin_batch(b, AgentMessage::cancel);
  append_task_ref(b, TaskRef{7, 1});
  append_task_ref(b, TaskRef{8, 2});
  out.emplace_back("cancel_two", b);

  FetchRequest fetch;
  fetch.request = 17;
  fetch.path = "/local/chorus-logs/node-01/longrun-1/sim-3.out";
  fetch.offset = 4096;
  out.emplace_back("fetch", encode_fetch(AgentMessage::fetch, fetch));
  fetch.node = "node-01";
  out.emplace_back("control_fetch", encode_fetch(AgentMessage::control_fetch, fetch));

  FetchReply reply;
  reply.request = 17;
  reply.ok = true;
  reply.size = 5000;
  reply.offset = 4096;
  reply.data = "step 100: residual 1.2e-3\nstep 200: residual 4.1e-4\n";
  out.emplace_back("fetched", encode_fetched(reply));
  FetchReply missing;
  missing.request = 18;
  missing.message = "no such file";
  out.emplace_back("fetched_error", encode_fetched(missing));

  OutputChunk chunk;
  chunk.task = 3;
  chunk.attempt = 2;
  chunk.stream = 1;
  chunk.first = true;
  chunk.note = "[the first 12 MiB of this stream are on node-01]";
  chunk.data = "Traceback (most recent call last):\n  ValueError: bad mesh\n";
  out.emplace_back("output", encode_output(chunk));

  AgentTelemetry telemetry;
  telemetry.targets_generation = 2;
  telemetry.rx_Bps = 1.2e6;
  telemetry.tx_Bps = 3.4e5;
  telemetry.backlog_bytes = 15000;
  telemetry.drops_per_s = 1.5;
  telemetry.running_cores = 8;
  telemetry.child_cpu = 7.6;
  telemetry.cpu_quota = 2;
  telemetry.links = {{0.0021, 2.5e6, 1.1e6, 0.4},
                     {0.05, LinkTelemetry::kNaN, LinkTelemetry::kNaN, 3}};
  out.emplace_back("telemetry", encode_telemetry(telemetry));
  out.emplace_back("telemetry_empty", encode_telemetry(AgentTelemetry{}));
  std::vector<DataSource> sources(2);
  sources[0] = {"store1", "10.0.0.5", 7000, SourceProbe::data_server, 3, 5};
  sources[1] = {"peer", "node-02", 443, SourceProbe::connect, 4, 5};
  out.emplace_back("probe_targets", encode_probe_targets(3, sources));

  for (const auto& [name, bytes] : out) {
    std::ofstream f(std::string(argv[1]) + "/" + name, std::ios::binary);
    f << bytes;
    if (!f) {
      std::fprintf(stderr, "cannot write %s/%s\n", argv[1], name.c_str());
      return 1;
    }
  }
  std::printf("%zu messages written to %s\n", out.size(), argv[1]);
  return 0;
}
