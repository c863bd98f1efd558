// `chorus report` end to end: a real run, the real report, rendered by headless Chromium.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "support/process.hpp"

using namespace chorus::test;

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

// The document without its <script> elements, so only what the scripts drew is counted (the
// drawing script itself spells out the markup it generates).
std::string without_scripts(const std::string& html) {
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const auto open = html.find("<script", pos);
    if (open == std::string::npos) break;
    out.append(html, pos, open - pos);
    const auto close = html.find("</script>", open);
    if (close == std::string::npos) return out;
    pos = close + 9;
  }
  out.append(html, pos, std::string::npos);
  return out;
}

// Headless Chromium with no network, no first-run work and a throwaway profile. CI installs
// Debian's `chromium` (scripts/setup.sh); a machine without it fails here rather than skipping.
ProcessResult chromium(const std::vector<std::string>& args, const std::string& cwd) {
  auto found = run_process({"/bin/sh", "-c", "command -v chromium"}, cwd);
  REQUIRE_MESSAGE(found.exit_code == 0,
                  "chromium is not installed: this test renders the report in headless Chromium "
                  "(install Debian's `chromium` package, e.g. with scripts/setup.sh)");
  TempDir profile;
  std::vector<std::string> argv = {"timeout",
                                   "120",
                                   trim(found.out),
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile.path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd);
}

}  // namespace

TEST_CASE("Integration.Report.RendersOneBarPerAttemptInChromium") {
  TempDir dir;
  // 12 tasks on this machine's cores: ten sleeps of different lengths, one failing task and one
  // retried once (2 attempts), so 13 attempts, 2 of them failed.
  write_file(dir / "wf.yaml", R"Y(name: gantt
tasks:
  - name: nap
    foreach: {i: "range(0, 10)"}
    command: "sleep 0.{i}5"
  - name: broken
    command: "sleep 0.2; echo 'no input file' >&2; exit 3"
  - name: flaky
    retries: 1
    command: "sleep 0.1; if [ -e flaky.once ]; then exit 0; fi; touch flaky.once; exit 1"
)Y");
  auto run = run_chorus({"run", "wf.yaml"}, dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 1);  // 'broken' fails the run

  auto report = run_chorus({"report", "latest"}, dir.path());
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  const std::string path = trim(report.out);
  CHECK(path == dir.path() + "/.chorus/runs/gantt-1/report.html");
  REQUIRE(file_exists(path));
  const std::string html = read_file(path);
  // Before the script runs the page holds no bars: Chromium must draw them.
  CHECK(count(without_scripts(html), "class=\"bar ") == 0);
  CHECK(html.find("gantt-1") != std::string::npos);

  auto dom = chromium({"--dump-dom", "file://" + path}, dir.path());
  INFO(dom.err);
  REQUIRE(dom.exit_code == 0);
  const std::string drawn = without_scripts(dom.out);
  CHECK(count(drawn, "<rect class=\"bar ") == 13);
  CHECK(count(drawn, "<rect class=\"bar k-executable s-failed\"") == 2);
  CHECK(count(drawn, "<rect class=\"bar k-executable s-succeeded\"") == 11);
  CHECK(drawn.find("class=\"util-line\"") != std::string::npos);
  CHECK(drawn.find("broken (attempt 1)") != std::string::npos);
  CHECK(drawn.find("flaky (attempt 2)") != std::string::npos);

  // A screenshot for people to look at: <build>/test-output/report.png.
  const std::string out_dir = binary_dir() + "/test-output";
  std::filesystem::create_directories(out_dir);
  const std::string shot = out_dir + "/report.png";
  std::filesystem::remove(shot);
  auto screenshot =
      chromium({"--screenshot=" + shot, "--window-size=1400,900", "file://" + path}, dir.path());
  INFO(screenshot.err);
  REQUIRE(screenshot.exit_code == 0);
  REQUIRE(file_exists(shot));
  const std::string png = read_file(shot);
  CHECK(png.size() > 10'000);
  CHECK(png.substr(1, 3) == "PNG");
}

TEST_CASE("Integration.Report.WritesWhereToldAndRejectsUnknownRuns") {
  TempDir dir;
  write_file(dir / "wf.yaml", "name: tiny\ntasks:\n  - name: a\n    command: [/bin/true]\n");
  REQUIRE(run_chorus({"run", "wf.yaml", "--state", "st"}, dir.path()).exit_code == 0);

  auto report = run_chorus({"report", "tiny-1", "--state", "st", "-o", "out/r.html"}, dir.path());
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  CHECK(trim(report.out) == dir.path() + "/out/r.html");
  CHECK(read_file(dir / "out/r.html").find("<!DOCTYPE html>") == 0);

  auto unknown = run_chorus({"report", "nope", "--state", "st"}, dir.path());
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no run 'nope'") != std::string::npos);
  CHECK(unknown.err.find("tiny-1") != std::string::npos);
}
