// Network-aware placement end to end on the real test bed (tests/netbed/): a coordinator in the
// hub namespace, one `chorus agent` per node namespace at 10/50/200 Mbit, a `chorus
// data-server` store, 30 data jobs one after another under `placement: network-aware` (no
// model: the analytic estimate). The 200 Mbit node is the clearly best choice for every job
// (2 MB in: ~1.7 s, ~0.35 s, ~0.1 s); it must be chosen for at least 27 of 30. The agents
// register in rate order, so the fallback without telemetry (least-allocated order: idle nodes
// tie, the first wins) would choose the 10 Mbit node: choosing the 200 Mbit one takes the
// agents' link measurements.
#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/netbed.hpp"
#include "support/process.hpp"

using namespace chorus::test;

TEST_CASE("Integration.NetAware.ChoosesTheClearlyBestNodeOnTheBed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: network namespaces need root");
    return;
  }
  TempDir dir;
  const std::string prefix = "bedp" + std::to_string(::getpid() % 100000);
  BedGuard guard{prefix, dir.path()};
  auto up = netbed({"up", "--prefix", prefix, "--nodes", "10,50,200", "--stores", "1", "--chorus",
                    chorus_bin(), "--no-bg", "--out", dir / "bed.json"},
                   dir.path());
  if (up.exit_code == 77) {
    MESSAGE(up.err);
    return;
  }
  REQUIRE(up.exit_code == 0);
  auto bed = nlohmann::json::parse(read_file(dir / "bed.json"));
  const std::string store = bed["stores"][0]["endpoint"];
  std::string wf =
      "name: netaware-ci\nscheduler: {placement: network-aware}\nsources:\n  s0: "
      "{address: '" +
      store + "'}\ntasks:\n  - name: warmup\n    command: 'sleep 4'\n";
  std::string prev = "warmup";
  for (int i = 0; i < 30; ++i) {
    std::string n = "j" + std::to_string(i);
    wf += "  - name: " + n + "\n    command: 'echo $CHORUS_NODE > " + n + ".node && " +
          chorus_bin() + " data-job --from " + store + " --input 2MB --cpu 10ms'\n    after: [" +
          prev + "]\n    data: {input: 2MB, from: s0, cpu: 10ms}\n";
    prev = n;
  }
  write_file(dir / "wf.yaml", wf);
  const std::string hub_ns = bed["hub"]["ns"], hub = bed["hub"]["address"];
  pid_t coord = start_process({"ip", "netns", "exec", hub_ns, chorus_bin(), "run", "wf.yaml",
                               "--agents", "3", "--listen", "tcp://" + hub + ":*"},
                              dir.path());
  std::string endpoint, keys;
  REQUIRE(eventually(
      [&] {
        std::smatch m;
        std::string err = read_file(dir / "bg.err");
        if (!std::regex_search(err, m, std::regex(R"(--connect (tcp://\S+) --keys (\S+))")))
          return false;
        endpoint = m[1];
        keys = m[2];
        return true;
      },
      20));
  std::vector<std::thread> agents;
  std::vector<ProcessResult> results(3);
  for (int i = 0; i < 3; ++i) {
    if (i > 0) sleep_ms(300);  // registration order = n0, n1, n2
    agents.emplace_back([&, i] {
      results[i] = netbed({"run-in", "--prefix", prefix, "n" + std::to_string(i), chorus_bin(),
                           "agent", "--connect", endpoint, "--keys", keys, "--node",
                           "n" + std::to_string(i), "--cores", "1"},
                          dir.path());
    });
  }
  int code = wait_process(coord);
  for (auto& t : agents) t.join();
  INFO("coordinator:\n", read_file(dir / "bg.err"));
  REQUIRE(code == 0);
  int best = 0;
  for (int i = 0; i < 30; ++i) {
    auto l = read_lines(dir / ("j" + std::to_string(i) + ".node"));
    REQUIRE(l.size() == 1);
    best += l[0] == "n2";
  }
  MESSAGE(best, " of 30 jobs on the 200 Mbit node");
  CHECK(best >= 27);
  for (const auto& r : results) CHECK(r.exit_code == 0);
}
