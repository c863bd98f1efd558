#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "runtime/report/html_report.hpp"

using namespace chorus;

namespace {

EventRecord ev(TaskId task, std::string name, TaskState state, double time,
               std::uint32_t attempt = 1, int cores = 1, std::string node = "n1",
               TaskKind kind = TaskKind::executable) {
  EventRecord e;
  e.task = task;
  e.name = std::move(name);
  e.state = state;
  e.time = time;
  e.attempt = attempt;
  if (state == TaskState::running) {
    e.cores = cores;
    e.node = std::move(node);
    e.kind = kind;
  }
  return e;
}

ReportAttempt att(TaskId task, double start, double end, int cores, std::string node = "n1") {
  ReportAttempt a;
  a.task = task;
  a.name = "t" + std::to_string(task);
  a.attempt = 1;
  a.cores = cores;
  a.node = std::move(node);
  a.start = start;
  a.end = end;
  a.state = TaskState::succeeded;
  return a;
}

const ReportAttempt& by_task(const ReportLayout& layout, TaskId task) {
  auto it = std::find_if(layout.attempts.begin(), layout.attempts.end(),
                         [&](const ReportAttempt& a) { return a.task == task; });
  REQUIRE(it != layout.attempts.end());
  return *it;
}

// The JSON the page embeds, parsed.
nlohmann::json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"chorus-data\">";
  const auto begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + 1)) ++n;
  return n;
}

RunInfo run_on(std::vector<NodeInfo> nodes) {
  RunInfo run;
  run.id = "flow-3";
  run.workflow_name = "flow";
  run.status = RunStatus::failed;
  run.created = 1000;
  run.updated = 1100;
  run.total_tasks = 3;
  run.nodes = std::move(nodes);
  return run;
}

}  // namespace

TEST_CASE("Runtime.HtmlReport.PairsRunningEventsWithTheirAttemptsEnd") {
  const std::vector<EventRecord> events = {
      ev(0, "a", TaskState::running, 10, 1, 2, "n1", TaskKind::mpi),
      ev(1, "b", TaskState::running, 11),
      ev(0, "a", TaskState::failed, 12, 1),  // retried
      ev(0, "a", TaskState::running, 13, 2, 2, "n2", TaskKind::mpi),
      ev(2, "never", TaskState::cancelled, 14),  // cancelled before it started: no attempt
      ev(0, "a", TaskState::succeeded, 15, 2),
      ev(3, "open", TaskState::running, 16),  // no end in the journal
  };
  auto attempts = collect_attempts(events, 50);
  REQUIRE(attempts.size() == 4);
  CHECK(attempts[0].name == "a");
  CHECK(attempts[0].attempt == 1);
  CHECK(attempts[0].state == TaskState::failed);
  CHECK(attempts[0].start == 10);
  CHECK(attempts[0].end == 12);
  CHECK(attempts[0].kind == TaskKind::mpi);
  CHECK(attempts[0].cores == 2);
  CHECK(attempts[0].node == "n1");
  CHECK(attempts[1].name == "b");
  CHECK(attempts[1].state == TaskState::running);  // still open at the end
  CHECK(attempts[1].end == 50);
  CHECK(attempts[2].attempt == 2);
  CHECK(attempts[2].state == TaskState::succeeded);
  CHECK(attempts[2].end == 15);
  CHECK(attempts[2].node == "n2");
  CHECK(attempts[3].name == "open");
  CHECK(attempts[3].end == 50);

  // Without an explicit end the latest event time is used.
  CHECK(collect_attempts(events, 0)[3].end == 16);
}

TEST_CASE("Runtime.HtmlReport.AttemptLeftOpenByAKilledCoordinatorEndsAtTheNextStart") {
  const std::vector<EventRecord> events = {
      ev(0, "a", TaskState::running, 10, 1),
      // The coordinator died; the resumed session starts the task again.
      ev(0, "a", TaskState::running, 30, 2),
      ev(0, "a", TaskState::succeeded, 31, 2),
  };
  auto attempts = collect_attempts(events, 100);
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].state == TaskState::running);
  CHECK(attempts[0].end == 30);
  CHECK(attempts[1].end == 31);
}

TEST_CASE("Runtime.HtmlReport.SpreadMpiAttemptIsDrawnOnEachOfItsNodes") {
  const std::vector<EventRecord> events = {
      ev(0, "wide", TaskState::running, 10, 1, 6, "n1:4,n3:2", TaskKind::mpi),
      ev(0, "wide", TaskState::failed, 12, 1),
  };
  auto attempts = collect_attempts(events, 50);
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].node == "n1");
  CHECK(attempts[0].cores == 4);
  CHECK(attempts[1].node == "n3");
  CHECK(attempts[1].cores == 2);
  for (const auto& a : attempts) {
    CHECK(a.state == TaskState::failed);
    CHECK(a.end == 12);
  }
}

TEST_CASE("Runtime.HtmlReport.PacksAttemptsIntoLowestConsecutiveFreeLanes") {
  std::vector<ReportAttempt> attempts = {
      att(0, 0, 10, 2),   // lanes 0-1
      att(1, 1, 5, 1),    // lane 2
      att(2, 2, 8, 1),    // lane 3
      att(3, 5, 9, 1),    // lane 2 again: attempt 1 ended at 5
      att(4, 6, 12, 2),   // no two consecutive free lanes at 6: lanes 4-5, past the capacity
      att(5, 10, 11, 2),  // lanes 0-1 are free again at 10
      att(6, 9, 11, 1),   // lane 2 (attempt 3 ended at 9)
  };
  auto layout = pack_lanes({NodeInfo{"n1", Resources{4, 0, 0}}}, attempts);
  REQUIRE(layout.groups.size() == 1);
  CHECK(layout.groups[0].node == "n1");
  CHECK_FALSE(layout.groups[0].pool);
  CHECK(layout.groups[0].capacity == 4);
  CHECK(layout.groups[0].lanes == 6);
  CHECK(by_task(layout, 0).lane == 0);
  CHECK(by_task(layout, 1).lane == 2);
  CHECK(by_task(layout, 2).lane == 3);
  CHECK(by_task(layout, 3).lane == 2);
  CHECK(by_task(layout, 4).lane == 4);
  CHECK(by_task(layout, 5).lane == 0);
  CHECK(by_task(layout, 6).lane == 2);
  // Start order.
  CHECK(std::is_sorted(layout.attempts.begin(), layout.attempts.end(),
                       [](const auto& a, const auto& b) { return a.start < b.start; }));
}

TEST_CASE("Runtime.HtmlReport.IdleNodesShowTheirCapacityUnboundedOnesOnlyUsedLanes") {
  auto layout =
      pack_lanes({NodeInfo{"small", Resources{8, 0, 0}}, NodeInfo{"idle", Resources{4, 0, 0}},
                  NodeInfo{"unbounded", Resources{1 << 29, 0, 0}}},
                 {att(0, 0, 1, 1, "small"), att(1, 0, 1, 3, "unbounded")});
  REQUIRE(layout.groups.size() == 3);
  CHECK(layout.groups[0].lanes == 8);
  CHECK(layout.groups[1].node == "idle");
  CHECK(layout.groups[1].lanes == 4);
  CHECK(layout.groups[2].lanes == 3);
}

TEST_CASE("Runtime.HtmlReport.ZeroCoreFunctionsGetTheirNodesPoolGroup") {
  std::vector<ReportAttempt> attempts = {att(0, 0, 5, 0), att(1, 1, 3, 0), att(2, 4, 6, 0),
                                         att(3, 0, 2, 1), att(4, 0, 1, 0, "elsewhere")};
  attempts[0].kind = attempts[1].kind = attempts[2].kind = TaskKind::function;
  auto layout = pack_lanes({NodeInfo{"n1", Resources{2, 0, 0}}}, attempts);
  // n1's cores, n1's pool, then the node the run did not list (it only ran a function).
  REQUIRE(layout.groups.size() == 3);
  CHECK_FALSE(layout.groups[0].pool);
  CHECK(layout.groups[1].pool);
  CHECK(layout.groups[1].node == "n1");
  CHECK(layout.groups[1].lanes == 2);  // at most two functions ran at once
  CHECK(layout.groups[2].pool);
  CHECK(layout.groups[2].node == "elsewhere");
  CHECK(by_task(layout, 0).group == 1);
  CHECK(by_task(layout, 1).group == 1);
  CHECK(by_task(layout, 1).lane == 1);
  CHECK(by_task(layout, 2).lane == 1);
  CHECK(by_task(layout, 3).group == 0);
  CHECK(by_task(layout, 4).group == 2);
}

TEST_CASE("Runtime.HtmlReport.RandomWorkloadsNeverOverlapInALane") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 20; ++round) {
    std::vector<ReportAttempt> attempts;
    std::uniform_real_distribution<double> start(0, 100), length(0.01, 20);
    std::uniform_int_distribution<int> cores(0, 6), node(0, 2);
    for (TaskId i = 0; i < 300; ++i) {
      const double s = start(rng);
      attempts.push_back(att(i, s, s + length(rng), cores(rng), "n" + std::to_string(node(rng))));
    }
    auto layout = pack_lanes(
        {NodeInfo{"n0", Resources{16, 0, 0}}, NodeInfo{"n1", Resources{4, 0, 0}}}, attempts);
    REQUIRE(layout.attempts.size() == attempts.size());
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> lanes;
    for (const auto& a : layout.attempts) {
      REQUIRE(a.group >= 0);
      REQUIRE(a.group < static_cast<int>(layout.groups.size()));
      const auto& g = layout.groups[static_cast<std::size_t>(a.group)];
      CHECK(g.node == a.node);
      CHECK(g.pool == (a.cores == 0));
      CHECK(a.lane + std::max(1, a.cores) <= g.lanes);
      for (int l = a.lane; l < a.lane + std::max(1, a.cores); ++l) {
        lanes[{a.group, l}].emplace_back(a.start, a.end);
      }
    }
    for (auto& [lane, intervals] : lanes) {
      std::sort(intervals.begin(), intervals.end());
      for (std::size_t i = 1; i < intervals.size(); ++i) {
        CHECK(intervals[i - 1].second <= intervals[i].first);
      }
    }
  }
}

TEST_CASE("Runtime.HtmlReport.PageIsSelfContainedAndEmbedsEveryAttempt") {
  const std::vector<EventRecord> events = {
      ev(0, "sim", TaskState::running, 1000, 1, 4, "n1", TaskKind::mpi),
      ev(1, "</script><b>x</b>", TaskState::running, 1001, 1, 1, "n1"),
      ev(2, "fn", TaskState::running, 1002, 1, 0, "n1", TaskKind::function),
      ev(1, "</script><b>x</b>", TaskState::failed, 1003, 1),
      ev(2, "fn", TaskState::succeeded, 1004, 1),
      ev(0, "sim", TaskState::succeeded, 1010, 1),
  };
  const std::string html = render_html_report(run_on({NodeInfo{"n1", Resources{8, 0, 0}}}), events);

  // Nothing is fetched at view time.
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  // The only URL is the SVG namespace name, which is never fetched.
  CHECK(count(html, "http") == count(html, "http://www.w3.org/2000/svg"));
  // A task name cannot close the data's script element.
  CHECK(html.find("</script><b>") == std::string::npos);
  CHECK(count(html, "</script>") == 2);

  auto data = embedded_data(html);
  CHECK(data["run"] == "flow-3");
  CHECK(data["span"].get<double>() == doctest::Approx(10));
  REQUIRE(data["bars"].size() == 3);
  REQUIRE(data["groups"].size() == 2);
  CHECK(data["groups"][0]["capacity"] == 8);
  CHECK(data["groups"][1]["pool"] == true);
  const auto& kinds = data["kinds"];
  const auto& states = data["states"];
  const auto& sim = data["bars"][0];
  CHECK(sim[2] == 4);  // lanes (cores)
  CHECK(kinds[sim[5].get<std::size_t>()] == "mpi");
  CHECK(states[sim[6].get<std::size_t>()] == "succeeded");
  CHECK(sim[8] == "sim");
  const auto& bad = data["bars"][1];
  CHECK(bad[8] == "</script><b>x</b>");
  CHECK(states[bad[6].get<std::size_t>()] == "failed");
  CHECK(bad[1] == 4);  // the lane after sim's four
  const auto& fn = data["bars"][2];
  CHECK(fn[0] == 1);  // the pool group
  CHECK(kinds[fn[5].get<std::size_t>()] == "function");

  // Busy cores: 4 from 0 s, 5 from 1 s, 4 from 3 s, 0 from 10 s (the function holds no core).
  CHECK(data["util"]["total"] == 8);
  const nlohmann::json steps = {{0.0, 4}, {1.0, 5}, {3.0, 4}, {10.0, 0}};
  CHECK(data["util"]["steps"] == steps);
  // (4 x 10 + 1 x 2) core-seconds over 8 cores x 10 s.
  CHECK(html.find("52.5% mean, peak 5 of 8 cores") != std::string::npos);
  CHECK(html.find("3 (2 succeeded, 1 failed, 0 timed out") != std::string::npos);
  CHECK(html.find("id=\"capped\"") == std::string::npos);
}

TEST_CASE("Runtime.HtmlReport.ManyAttemptsAreCappedKeepingFailuresAndSayingSo") {
  std::vector<EventRecord> events;
  for (TaskId i = 0; i < 50; ++i) {
    const double start = i;
    events.push_back(ev(i, "t" + std::to_string(i), TaskState::running, start));
    const bool fails = i % 17 == 3;  // 3, 20, 37
    events.push_back(ev(i, "t" + std::to_string(i),
                        fails ? TaskState::failed : TaskState::succeeded, start + 1 + i % 7));
  }
  HtmlReportOptions options;
  options.max_bars = 10;
  const std::string html =
      render_html_report(run_on({NodeInfo{"n1", Resources{4, 0, 0}}}), events, options);
  auto data = embedded_data(html);
  REQUIRE(data["bars"].size() == 10);
  int failed = 0;
  for (const auto& b : data["bars"]) {
    if (data["states"][b[6].get<std::size_t>()] == "failed") ++failed;
    if (data["states"][b[6].get<std::size_t>()] == "succeeded") CHECK(b[4].get<double>() >= 6.0);
  }
  // The 7 longest successful attempts: six of 7 s, one of 6 s.
  CHECK(failed == 3);
  CHECK(html.find("draws 10 of 50 attempts") != std::string::npos);
  // Utilization still counts all 50.
  CHECK(html.find("50 (47 succeeded, 3 failed") != std::string::npos);
}

TEST_CASE("Runtime.HtmlReport.RunWithoutRecordedNodesMeasuresAgainstThePeak") {
  // A journal from before schema 2: no node list, events without node names.
  const std::vector<EventRecord> events = {
      ev(0, "a", TaskState::running, 0, 1, 1, ""),
      ev(1, "b", TaskState::running, 0, 1, 1, ""),
      ev(0, "a", TaskState::succeeded, 2, 1),
      ev(1, "b", TaskState::succeeded, 4, 1),
  };
  const std::string html = render_html_report(run_on({}), events);
  auto data = embedded_data(html);
  REQUIRE(data["groups"].size() == 1);
  CHECK(data["groups"][0]["node"] == "");
  CHECK(data["groups"][0]["lanes"] == 2);
  CHECK(data["util"]["total"] == 2);
  CHECK(html.find("did not record the node capacity") != std::string::npos);
  CHECK(html.find("75.0% mean, peak 2 of 2 cores") != std::string::npos);
}

TEST_CASE("Runtime.HtmlReport.InvalidUtf8FromAnOldJournalBecomesReplacementCharacters") {
  // "é" stays; a lone 0x80, a truncated sequence and an encoded surrogate become U+FFFD each.
  const std::string name = "caf\xC3\xA9-\x80-\xE2\x82-\xED\xA0\x80";
  const std::vector<EventRecord> events = {
      ev(0, name, TaskState::running, 1000, 1, 1, "n\xFF"),
      ev(0, name, TaskState::succeeded, 1001, 1),
  };
  RunInfo run = run_on({NodeInfo{"n\xFF", Resources{2, 0, 0}}});
  run.workflow_name = "wf\xC0";
  const std::string html = render_html_report(run, events);
  auto data = embedded_data(html);  // throws on invalid UTF-8
  REQUIRE(data["bars"].size() == 1);
  const std::string r = "\xEF\xBF\xBD";
  CHECK(data["bars"][0][8] == "caf\xC3\xA9-" + r + "-" + r + r + "-" + r + r + r);
  CHECK(html.find("wf" + r) != std::string::npos);
  CHECK(html.find('\xC0') == std::string::npos);
  CHECK(html.find('\xFF') == std::string::npos);
}
