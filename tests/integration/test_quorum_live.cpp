// The live quorum training (examples/quorum-training): a real parameter server and real workers,
// real CURVE sockets, real stragglers. Each case is bounded (the PS's --max-rounds and the wait's
// timeout) and stops every process, cgroup and namespace it made, on failure too.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "support/journal.hpp"
#include "support/net_namespace.hpp"
#include "support/process.hpp"

using namespace chorus::test;
using nlohmann::json;

namespace {

std::string example_bin(const std::string& name) {
  return binary_dir() + "/examples/quorum-training/" + name;
}

// A PS and its workers started by hand (not through `chorus run`, so a test can put one worker
// in a cgroup or a namespace, or stop it); all killed and reaped when the object dies.
class LiveRun {
 public:
  explicit LiveRun(const TempDir& dir) : dir_(dir.path()), state_(dir / "st") {}
  ~LiveRun() {
    for (pid_t p : pids_) ::kill(-p, SIGKILL);
    for (pid_t p : pids_) wait_process(p);
  }
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  // `prefix` runs before the program (e.g. {"ip", "netns", "exec", ns}).
  pid_t start(const std::string& name, std::vector<std::string> argv,
              const std::vector<std::string>& prefix = {}) {
    const std::string cwd = dir_ + "/" + name;
    std::filesystem::create_directories(cwd);
    argv.insert(argv.begin(), prefix.begin(), prefix.end());
    const pid_t pid = start_process(argv, cwd);
    pids_.push_back(pid);
    return pid;
  }
  pid_t ps(std::vector<std::string> flags, const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = {example_bin("quorum_ps"), "serve", "--state", state_};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return start("ps", argv, prefix);
  }
  pid_t worker(int id, std::vector<std::string> flags = {},
               const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = {example_bin("quorum_worker"), "--state", state_, "--id",
                                     std::to_string(id)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return start("w" + std::to_string(id), argv, prefix);
  }
  // The PS's result.json, once written (null after `seconds`).
  json result(double seconds = 50) {
    const std::string path = state_ + "/result.json";
    if (!eventually([&] { return file_exists(path); }, seconds)) return nullptr;
    return json::parse(read_file(path));
  }
  std::string logs() const {
    std::string all;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.is_directory() && file_exists(e.path().string() + "/bg.err")) {
        all += e.path().filename().string() + ": " + read_file(e.path().string() + "/bg.out") +
               read_file(e.path().string() + "/bg.err") + "\n";
      }
    }
    return all;
  }
  const std::string& state() const { return state_; }

 private:
  std::string dir_, state_;
  std::vector<pid_t> pids_;
};

// The example's workflow with absolute program paths (its state folder stays relative) and the
// PS on `port` (each case its own, so ctest -j can run them side by side).
std::string example_workflow(int port) {
  std::string yaml = read_file(source_dir() + "/examples/quorum-training/quorum-training.yaml");
  const std::string probe = "{tcp: 25791,";
  if (const auto at = yaml.find(probe); at != std::string::npos) {
    yaml.replace(at, probe.size(), "{tcp: " + std::to_string(port) + ",");
  }
  for (const std::string prog : {"quorum_ps", "quorum_worker"}) {
    for (std::size_t at = 0; (at = yaml.find("./" + prog, at)) != std::string::npos;) {
      yaml.replace(at, prog.size() + 2, example_bin(prog));
    }
  }
  return yaml;
}

std::vector<std::string> base_flags(int port, int n) {
  return {
      "--port", std::to_string(port), "--n",  std::to_string(n), "--workload", "logistic", "--dim",
      "100",    "--samples",          "4000", "--batch",         "64",         "--lr",     "0.5"};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Mean arrival time (s after the round's start) of each worker over the rounds it arrived in.
std::vector<double> mean_arrivals(const json& result) {
  std::vector<double> out;
  for (const auto& w : result.at("workers")) out.push_back(w.at("mean_arrival_s").get<double>());
  return out;
}

// Writes a cgroup control file; false when the kernel refuses the value.
bool write_control(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value << std::flush;
  return static_cast<bool>(out);
}

int used_of(const json& result, int worker) {
  return result.at("workers").at(worker).at("used").get<int>();
}

}  // namespace

TEST_CASE("Integration.QuorumLive.WorkflowTrainsToTargetWithServices") {
  TempDir dir;
  write_file(dir / "wf.yaml", example_workflow(25819));
  auto r = run_chorus({"run", "--cores", "6", "wf.yaml"}, dir.path());
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = json::parse(read_file(dir / "ps-state/result.json"));
  CHECK(result.at("reached_target").get<bool>());
  CHECK(result.at("policy") == "static");
  for (const auto& round : result.at("per_round")) CHECK(round.at("k") == 3);  // b = 1 of 4
  CHECK(result.at("rejected_total") == 0);
  CHECK(result.at("median_curvature").is_null());  // no probe unless asked for
  auto logs = run_chorus({"logs", "latest", "train", "--stdout"}, dir.path());
  CHECK(logs.out.find("reached target true") != std::string::npos);
  // The key folder is private to the user.
  namespace fs = std::filesystem;
  CHECK((fs::status(dir / "ps-state/keys").permissions() &
         (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  CHECK((fs::status(dir / "ps-state/keys/worker.key").permissions() &
         (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
}

TEST_CASE("Integration.QuorumLive.WorkflowOnAgentsPlacesTheReplicasOnTheirNodes") {
  TempDir dir;
  write_file(dir / "wf.yaml", example_workflow(25820));
  const pid_t coord = start_process({chorus_bin(), "run", "wf.yaml", "--agents", "2", "--listen",
                                     "tcp://127.0.0.1:*", "--agent-timeout", "5s"},
                                    dir.path());
  std::vector<pid_t> agents;
  struct Reap {
    std::vector<pid_t>* pids;
    ~Reap() {
      for (pid_t p : *pids) {
        if (process_alive(p)) ::kill(-p, SIGKILL);
        wait_process(p);
      }
    }
  } reap{&agents};
  agents.push_back(coord);
  std::smatch m;
  std::string err;
  REQUIRE(eventually(
      [&] {
        err = read_file(dir / "bg.err");
        return std::regex_search(err, m, std::regex(R"(--connect (tcp://\S+) --keys (\S+))"));
      },
      20));
  const std::string endpoint = m[1], keys = m[2];
  for (const std::string node : {"a", "b"}) {  // 3 cores each: the 6 tasks need both
    std::filesystem::create_directories(dir / node);
    agents.push_back(start_process({chorus_bin(), "agent", "--connect", endpoint, "--keys", keys,
                                    "--node", node, "--cores", "3"},
                                   dir / node));
  }
  const int rc = wait_process(coord);
  agents.erase(agents.begin());
  INFO(read_file(dir / "bg.err"));
  REQUIRE(rc == 0);
  const auto result = json::parse(read_file(dir / "ps-state/result.json"));
  CHECK(result.at("reached_target").get<bool>());
  CHECK(read_file(dir / "ps-state/endpoint").find(":25820") != std::string::npos);
  std::set<std::string> nodes;
  for (const auto& e : latest_run_events(dir / ".chorus")) {
    if (e.kind == chorus::TaskKind::service && e.state == chorus::TaskState::running) {
      nodes.insert(e.node);
    }
  }
  CHECK(nodes == std::set<std::string>{"a", "b"});
}

// --curvature-probe 1: each worker sends the secant curvature along its last step with its
// gradient, and dbw+ reads it as L (the round simulator's --curvature).
TEST_CASE("Integration.QuorumLive.WorkersSendTheCurvatureProbeWhenAsked") {
  TempDir dir;
  LiveRun run(dir);
  run.ps(base_flags(25826, 4) + std::vector<std::string>{"--policy", "dbw+", "--curvature-probe",
                                                         "1", "--max-rounds", "20"});
  for (int w = 0; w < 4; ++w) run.worker(w);
  const json result = run.result();
  REQUIRE_MESSAGE(!result.is_null(), run.logs());
  CHECK(result.at("rejected_total") == 0);
  REQUIRE(result.at("median_curvature").is_number());
  const double curvature = result.at("median_curvature").get<double>();
  // Logistic loss: along any direction its curvature is in [l2, max ||x||^2 / 4 + l2]; the
  // features here are of order 1 in 100 dimensions.
  CHECK(curvature > 0);
  CHECK(curvature < 100);
  MESSAGE("median curvature probe ", curvature);
}

TEST_CASE("Integration.QuorumLive.BadPolicyOrKIsRefusedBeforeBinding") {
  TempDir dir;
  auto r = run_process({example_bin("quorum_ps"), "serve", "--state", dir / "st", "--port", "25818",
                        "--policy", "dbww"},
                       dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown quorum policy 'dbww'") != std::string::npos);
  CHECK(r.err.find("wait-all") != std::string::npos);  // the known ones are listed
  r = run_process({example_bin("quorum_ps"), "serve", "--state", dir / "st", "--port", "25818",
                   "--n", "4", "--policy", "static", "--option", "k=9"},
                  dir.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--option k=9 with --n 4 workers: k must be at most 4") != std::string::npos);
  CHECK(!file_exists(dir / "st"));  // refused before anything was written
}

TEST_CASE("Integration.QuorumLive.MalformedGradientsAreRejectedCountedAndTheRoundGoesOn") {
  TempDir dir;
  LiveRun run(dir);
  run.ps(base_flags(25811, 4) + std::vector<std::string>{"--policy", "wait-all", "--max-rounds",
                                                         "40", "--scenario", "S0", "--base-s",
                                                         "0.005"});
  const char* kinds[] = {"bad-frame", "wrong-dim", "nan", "past-round"};
  for (int w = 0; w < 4; ++w) run.worker(w, {"--inject", kinds[w], "--inject-every", "4"});
  const auto result = run.result();
  INFO(run.logs());
  REQUIRE(!result.is_null());
  CHECK(result.at("rounds") == 40);
  // Each of the 10 faulty frames per kind refused under its reason; every round still heard
  // from all 4 workers (wait-all) through their real gradients.
  const auto& rej = result.at("rejected");
  CHECK(rej.at("bad_frame") == 10);
  CHECK(rej.at("wrong_dim") == 10);
  CHECK(rej.at("non_finite") == 10);
  CHECK(rej.at("past_round") == 10);
  CHECK(result.at("rejected_total") == 40);
  for (const auto& round : result.at("per_round")) CHECK(round.at("k") == 4);
  CHECK(result.at("final_loss").get<double>() < result.at("per_round")[0].at("loss").get<double>());
}

TEST_CASE("Integration.QuorumLive.InterruptDropsStaleWorkTimedTimesIt") {
  // S4: workers 0 and 1 persistently 8x slower; static k = 2 closes on the fast ones.
  auto run_mode = [](const std::string& mode, int port) {
    TempDir dir;
    LiveRun run(dir);
    run.ps(base_flags(port, 4) +
           std::vector<std::string>{"--policy", "static", "--option", "k=2", "--mode", mode,
                                    "--max-rounds", "30", "--scenario", "S4", "--base-s", "0.01",
                                    "--tail-s", "0.005", "--slow-factor", "8"});
    for (int w = 0; w < 4; ++w) run.worker(w);
    auto result = run.result();
    INFO(run.logs());
    REQUIRE(!result.is_null());
    return result;
  };
  const auto interrupt = run_mode("interrupt", 25812);
  const auto timed = run_mode("timed", 25813);
  for (const auto* r : {&interrupt, &timed}) {
    for (const auto& round : r->at("per_round")) CHECK(round.at("k") == 2);
  }
  // Interrupt: a new round stops the late workers' sleep at once, so they almost never send a
  // stale gradient and no late arrival is ever timed.
  CHECK(interrupt.at("late_timed") == 0);
  CHECK(interrupt.at("late_dropped").get<int>() <= 3);
  int censored = 0;
  for (const auto& round : interrupt.at("per_round")) {
    for (const auto& a : round.at("arrivals")) censored += a.is_null() ? 1 : 0;
  }
  CHECK(censored >= 50);  // the slow pair, most rounds
  // Timed: the slow ones' gradients arrive after the close, timed (later than the round's
  // close), unused.
  CHECK(timed.at("late_timed").get<int>() >= 10);
  int timed_late = 0;
  for (const auto& round : timed.at("per_round")) {
    const double closed = round.at("duration_s").get<double>();
    for (std::size_t w = 0; w < 4; ++w) {
      const auto& a = round.at("arrivals")[w];
      if (!a.is_null() && a.get<double>() > closed && round.at("used")[w] == 0) ++timed_late;
    }
  }
  CHECK(timed_late >= 10);
}

TEST_CASE("Integration.QuorumLive.CgroupCpuQuotaMakesAWorkerLate") {
  // cgroup v1 CPU quota 5% (1 ms per 20 ms) on worker 2; the gradient is the cost here
  // (d 1,000, batch 4,000: a few ms), the trace adds almost nothing (S0, 1 ms).
  const std::string cg = "/sys/fs/cgroup/cpu/live" + std::to_string(::getpid());
  if (::mkdir(cg.c_str(), 0755) != 0) {
    MESSAGE((std::string("skipped: cannot create a cgroup v1 cpu group (") + cg + ")"));
    return;
  }
  struct Remove {
    std::string path;
    ~Remove() {
      // Move any task back to the root before removing the group.
      for (const auto& pid : read_lines(path + "/cgroup.procs")) {
        write_control("/sys/fs/cgroup/cpu/cgroup.procs", pid);
      }
      ::rmdir(path.c_str());
    }
  } remove{cg};
  REQUIRE(write_control(cg + "/cpu.cfs_period_us", "20000"));
  REQUIRE(write_control(cg + "/cpu.cfs_quota_us", "1000"));  // the kernel minimum
  TempDir dir;
  LiveRun run(dir);
  run.ps({"--port",     "25814", "--n",       "3",        "--workload",   "logistic",
          "--dim",      "1000",  "--samples", "4000",     "--batch",      "4000",
          "--lr",       "0.5",   "--policy",  "wait-all", "--max-rounds", "25",
          "--scenario", "S0",    "--base-s",  "0.001"});
  run.worker(0);
  run.worker(1);
  const pid_t slow = run.worker(2);
  // cgroup.procs (not tasks): every thread of the worker, its ZeroMQ I/O threads included.
  REQUIRE(write_control(cg + "/cgroup.procs", std::to_string(slow)));
  const auto result = run.result();
  INFO(run.logs());
  REQUIRE(!result.is_null());
  const auto mean = mean_arrivals(result);
  INFO("mean arrivals: ", mean[0], " ", mean[1], " ", mean[2]);
  // 5% of a core: ~20x slower alone; the margin leaves room for a machine other jobs load (the
  // unthrottled workers slow down then, the throttled one cannot get faster).
  CHECK(mean[2] > 2 * std::max(mean[0], mean[1]));
}

TEST_CASE("Integration.QuorumLive.SigstopBurstsLeaveAWorkerBehind") {
  TempDir dir;
  LiveRun run(dir);
  run.ps(base_flags(25815, 4) + std::vector<std::string>{"--policy", "static", "--option", "b=1",
                                                         "--max-rounds", "150", "--scenario", "S0",
                                                         "--base-s", "0.01"});
  for (int w = 0; w < 3; ++w) run.worker(w);
  const pid_t bursty = run.worker(3);
  // The controller: worker 3 stopped 150 ms of every 300 ms until the training ends.
  std::atomic<bool> done{false};
  std::thread controller([&] {
    while (!done) {
      ::kill(bursty, SIGSTOP);
      sleep_ms(150);
      ::kill(bursty, SIGCONT);
      sleep_ms(150);
    }
  });
  const auto result = run.result();
  done = true;
  controller.join();
  ::kill(bursty, SIGCONT);
  INFO(run.logs());
  REQUIRE(!result.is_null());
  const int others = std::min({used_of(result, 0), used_of(result, 1), used_of(result, 2)});
  INFO("used: ", used_of(result, 0), " ", used_of(result, 1), " ", used_of(result, 2), " ",
       used_of(result, 3));
  // Stopped half the time, it is the one left out of most rounds.
  CHECK(used_of(result, 3) < others / 2 + 10);
  CHECK(others > 100);
}

TEST_CASE("Integration.QuorumLive.ShapedLinkDelaysAWorker") {
  // Worker 3 in namespace b behind a 2 Mbit/s TBF link both ways; the PS and workers 0-2 in
  // namespace a (loopback). A round's frame and a gradient are 8 KB each (d 1,000).
  NamespacePair ns("qlive");
  if (!ns.available()) {
    MESSAGE("skipped: network namespaces are not available here");
    return;
  }
  for (const auto& [n, dev] : {std::pair{ns.a(), ns.dev_a()}, std::pair{ns.b(), ns.dev_b()}}) {
    REQUIRE(sh("ip netns exec " + n + " tc qdisc add dev " + dev +
               " root tbf rate 2mbit burst 4kb latency 400ms"));
  }
  TempDir dir;
  LiveRun run(dir);
  const std::vector<std::string> in_a = {"ip", "netns", "exec", ns.a()};
  run.ps({"--host",       ns.addr_a(), "--port",     "25816", "--n",       "4",
          "--workload",   "logistic",  "--dim",      "1000",  "--samples", "2000",
          "--batch",      "32",        "--lr",       "0.5",   "--policy",  "wait-all",
          "--max-rounds", "20",        "--scenario", "S0",    "--base-s",  "0.005"},
         in_a);
  for (int w = 0; w < 3; ++w) run.worker(w, {}, in_a);
  run.worker(3, {}, {"ip", "netns", "exec", ns.b()});
  const auto result = run.result();
  INFO(run.logs());
  REQUIRE(!result.is_null());
  const auto mean = mean_arrivals(result);
  INFO("mean arrivals: ", mean[0], " ", mean[1], " ", mean[2], " ", mean[3]);
  // 16 KB at 2 Mbit/s is ~65 ms per round trip of frames; the local ones take ~5 ms.
  CHECK(mean[3] > 0.04);
  CHECK(mean[3] > 4 * std::max({mean[0], mean[1], mean[2]}));
}

TEST_CASE("Integration.QuorumLive.KilledServerRestartsAndResumesFromItsCheckpoint") {
  TempDir dir;
  const std::string yaml = R"Y(name: ps-kill
services:
  - name: ps
    command: [)Y" + example_bin("quorum_ps") +
                           R"Y(, serve, --state, ps-state, --port, "{port}", --n, "3",
              --policy, static, --option, b=1, --max-rounds, "150", --scenario, S1,
              --base-s, "0.01", --tail-s, "0.01", --seed, "3"]
    cores: 1
    ready: {tcp: 25817, timeout: 30s}
    restart: {policy: on-failure, max: 3, backoff: 200ms}
  - name: worker
    command: [)Y" + example_bin("quorum_worker") +
                           R"Y(, --state, ps-state, --id, "{replica}"]
    replicas: 3
    cores: 1
    ready: {stdout: "^worker \\d+ connecting", timeout: 60s}
tasks:
  - name: train
    uses: [ps, worker]
    command: [)Y" + example_bin("quorum_ps") +
                           R"Y(, wait, --state, ps-state, --timeout, "120"]
)Y";
  write_file(dir / "wf.yaml", yaml);
  const pid_t chorus_pid =
      start_process({chorus_bin(), "run", "--cores", "5", "wf.yaml"}, dir.path());
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (process_alive(pid)) ::kill(-pid, SIGKILL);
    }
  } reap{chorus_pid};
  // Mid-training: once round 40 is checkpointed, SIGKILL the PS.
  const std::string cp = dir / "ps-state/checkpoint.json";
  int killed_after = 0;
  REQUIRE(eventually(
      [&] {
        if (!file_exists(cp)) return false;
        try {
          killed_after = json::parse(read_file(cp)).at("round_done").get<int>();
        } catch (const json::exception&) {
          return false;  // (never half-written: renamed into place; a parse error fails below)
        }
        return killed_after >= 40;
      },
      60));
  const pid_t ps_pid = std::stoi(read_file(dir / "ps-state/ps.pid"));
  REQUIRE(::kill(ps_pid, SIGKILL) == 0);
  const int rc = wait_process(chorus_pid);
  INFO(read_file(dir / "bg.out"), read_file(dir / "bg.err"));
  REQUIRE(rc == 0);
  const auto result = json::parse(read_file(dir / "ps-state/result.json"));
  CHECK(result.at("rounds") == 150);
  // One restart, resumed right after a checkpointed round at or after the one seen before the
  // kill (the PS may have closed a few more rounds before the signal landed).
  REQUIRE(result.at("resumed_at").size() == 1);
  const int resumed = result.at("resumed_at")[0].get<int>();
  CHECK(resumed >= killed_after + 1);
  CHECK(resumed <= 150);
  // The rounds are contiguous: none lost, none done twice.
  int expect = 1;
  for (const auto& round : result.at("per_round")) CHECK(round.at("round") == expect++);
  CHECK(expect == 151);
  // From the checkpointed weights, not from the start: the first round after the restart is as
  // far down as the one before it (round 1's loss is ~0.675, round 40's ~0.61).
  const auto& rounds = result.at("per_round");
  const double first = rounds[0].at("loss").get<double>();
  const double before = rounds[resumed - 2].at("loss").get<double>();
  const double after = rounds[resumed - 1].at("loss").get<double>();
  CHECK(after < first - 0.03);
  CHECK(std::abs(after - before) < 0.02);
  // The journal shows the PS's attempt that failed and its restart.
  int ps_attempts = 0;
  for (const auto& e : latest_run_events(dir / ".chorus")) {
    if (e.name == "ps" && e.state == chorus::TaskState::running && e.detail.empty()) ++ps_attempts;
  }
  CHECK(ps_attempts == 2);
}
