// ReadinessProbe's stdout check on its own, against a real file: a megabyte line neither crashes
// it (std::regex recursed per character) nor grows what it keeps, and the lines after it count.
// And a probe whose launcher checks readiness itself (ProbeTarget::reported): its endpoint forms.
#include <doctest/doctest.h>

#include <fstream>

#include "core/units.hpp"
#include "runtime/services/readiness_probe.hpp"
#include "support/process.hpp"

using namespace chorus;
using chorus::test::TempDir;

namespace {

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

ReadyProbe stdout_probe(const std::string& pattern) {
  ReadyProbe p;
  p.kind = ProbeKind::stdout_regex;
  p.regex = pattern;
  return p;
}

}  // namespace

TEST_CASE("Runtime.ReadinessProbe.AMegabyteLineIsBoundedAndTheNextLineMatches") {
  for (const std::string pattern : {"ready.*", "^ready"}) {
    CAPTURE(pattern);
    TempDir dir;
    const std::string out = dir / "stdout";
    ReadinessProbe probe(stdout_probe(pattern), ProbeTarget{"", 0, out, dir.path(), {}});
    const TimePoint now = Clock::now();
    // 1 MiB without a newline: nothing matches yet, and the probe holds at most its cap.
    append(out, "xready" + std::string(1 << 20, 'x'));
    CHECK(!probe.check(now).has_value());
    CHECK(probe.kept_bytes() <= ReadinessProbe::kMaxLineBytes);
    append(out, std::string(1 << 20, 'y'));
    CHECK(!probe.check(now).has_value());
    CHECK(probe.kept_bytes() <= ReadinessProbe::kMaxLineBytes);
    append(out, "\nready at 10.0.0.1\n");
    auto endpoint = probe.check(now);
    REQUIRE(endpoint.has_value());
    CHECK(endpoint->starts_with("ready"));
  }
}

TEST_CASE("Runtime.ReadinessProbe.ALongLineMatchesOnItsFirst64KiB") {
  TempDir dir;
  const std::string out = dir / "stdout";
  ReadinessProbe probe(stdout_probe("listening on (\\S+)"),
                       ProbeTarget{"", 0, out, dir.path(), {}});
  append(out, "listening on 127.0.0.1:9000 " + std::string(1 << 20, 'z') + "\n");
  CHECK(probe.check(Clock::now()) == "127.0.0.1:9000");
}

TEST_CASE("Runtime.ReadinessProbe.AnInvalidPatternSaysSoInLastError") {
  TempDir dir;
  ReadinessProbe probe(stdout_probe("ready ("), ProbeTarget{"", 0, dir / "stdout", dir.path(), {}});
  append(dir / "stdout", "ready (\n");
  CHECK(!probe.check(Clock::now()).has_value());
  CHECK(probe.last_error().find("RE2 syntax") != std::string::npos);
}

TEST_CASE("Runtime.ReadinessProbe.ALauncherThatChecksReadinessGivesTheEndpointAtItsAddress") {
  std::optional<ReplicaReadiness> now_known = ReplicaReadiness{"", false, "its Pod p is Pending"};
  ProbeTarget target{"node-a", 8081, "", "/tmp", [&] { return now_known; }};
  ReadyProbe tcp;
  tcp.port = 8080;
  ReadinessProbe probe(tcp, target);
  // Never a connection to the node: what the launcher says, until it says ready.
  CHECK(!probe.check(Clock::now()).has_value());
  CHECK(probe.last_error() == "its Pod p is Pending");
  now_known = ReplicaReadiness{"10.244.1.7", true, ""};
  CHECK(probe.check(Clock::now()) == "10.244.1.7:8081");
  ReadyProbe http = tcp;
  http.kind = ProbeKind::http;
  now_known = ReplicaReadiness{"fd00::7", true, ""};
  CHECK(ReadinessProbe(http, target).check(Clock::now()) == "http://[fd00::7]:8081");
  now_known.reset();
  ReadinessProbe gone(tcp, target);
  CHECK(!gone.check(Clock::now()).has_value());
  CHECK(gone.last_error() == "its launcher has lost track of it");
  // A file probe: the file's first line where the coordinator sees it, else the path.
  TempDir dir;
  ReadyProbe file;
  file.kind = ProbeKind::file;
  file.path = "addr.txt";
  now_known = ReplicaReadiness{"10.244.1.7", true, ""};
  ProbeTarget in_dir{"", 0, "", dir.path(), [&] { return now_known; }};
  CHECK(ReadinessProbe(file, in_dir).check(Clock::now()) == "addr.txt");
  append(dir / "addr.txt", "10.244.1.7:7000\n");
  CHECK(ReadinessProbe(file, in_dir).check(Clock::now()) == "10.244.1.7:7000");
}
