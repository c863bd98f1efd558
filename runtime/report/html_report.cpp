#include "runtime/report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <unordered_map>

#include "core/text.hpp"

namespace chorus {
namespace {

// A node with more cores than this is drawn with only the lanes it used: it is a stand-in for
// "unbounded" (chorus run --oversubscribe), not a real machine.
constexpr int kMaxIdleLanes = 1024;
constexpr int kUnboundedCores = 1 << 20;

constexpr TaskKind kKinds[] = {TaskKind::executable, TaskKind::mpi, TaskKind::function,
                               TaskKind::service};
constexpr TaskState kStates[] = {TaskState::pending,   TaskState::ready,  TaskState::running,
                                 TaskState::succeeded, TaskState::failed, TaskState::cancelled,
                                 TaskState::timed_out};

std::uint64_t attempt_key(TaskId task, std::uint32_t attempt) {
  return (std::uint64_t{task} << 32) | attempt;
}

// Journals written before the loader refused invalid UTF-8 can hold any bytes; the report shows
// each bad one as U+FFFD (core/text's utf8_sequence_length), so the page and the JSON embedded in
// it are always valid UTF-8.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Appends the non-ASCII character at text[i], or U+FFFD for a byte that starts none; returns how
// many bytes of `text` it took.
std::size_t append_utf8_character(std::string& out, std::string_view text, std::size_t i) {
  const std::size_t n = utf8_sequence_length(text, i);
  if (n == 0) {
    out += kReplacement;
    return 1;
  }
  out.append(text.substr(i, n));
  return n;
}

// JSON text of a string, safe inside <script>: '<', '>' and '&' are escaped too, so no "</script>"
// or comment opener can appear in the embedded data.
void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      i += append_utf8_character(out, text, i) - 1;
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
}

void append_number(std::string& out, double v, int decimals = 3) {
  if (!std::isfinite(v)) v = 0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  out += buf;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      i += append_utf8_character(out, text, i) - 1;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string format_seconds(double s) {
  char buf[64];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  } else if (s < 7200) {
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(s / 60),
                  static_cast<int>(std::fmod(s, 60)));
  } else {
    std::snprintf(buf, sizeof buf, "%d h %02d min", static_cast<int>(s / 3600),
                  static_cast<int>(std::fmod(s, 3600) / 60));
  }
  return buf;
}

std::string format_utc(double wall) {
  const auto t = static_cast<std::time_t>(wall);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// Index of `v` in `all`; the arrays above list every enumerator.
template <typename E, std::size_t N>
int index_of(const E (&all)[N], E v) {
  for (std::size_t i = 0; i < N; ++i) {
    if (all[i] == v) return static_cast<int>(i);
  }
  return 0;
}

struct Utilization {
  std::vector<std::pair<double, int>> steps;  // (time relative to t0, busy cores from then on)
  int peak = 0;
  double core_seconds = 0;
};

Utilization utilization(const std::vector<ReportAttempt>& attempts, double t0) {
  std::vector<std::pair<double, int>> deltas;
  deltas.reserve(attempts.size() * 2);
  for (const auto& a : attempts) {
    if (a.cores <= 0) continue;
    deltas.emplace_back(a.start - t0, a.cores);
    deltas.emplace_back(a.end - t0, -a.cores);
  }
  // At equal times ends come first, so back-to-back attempts never count twice.
  std::sort(deltas.begin(), deltas.end());
  Utilization u;
  int busy = 0;
  for (std::size_t i = 0; i < deltas.size();) {
    const double t = deltas[i].first;
    if (!u.steps.empty()) u.core_seconds += busy * (t - u.steps.back().first);
    for (; i < deltas.size() && deltas[i].first == t; ++i) busy += deltas[i].second;
    u.peak = std::max(u.peak, busy);
    if (!u.steps.empty() && u.steps.back().second == busy) continue;
    u.steps.emplace_back(t, busy);
  }
  return u;
}

// Which attempts get a bar when there are more than `cap`: every one that did not succeed, then
// the longest successful ones. Returns a mask over `attempts`.
std::vector<char> choose_bars(const std::vector<ReportAttempt>& attempts, std::size_t cap) {
  std::vector<char> drawn(attempts.size(), 1);
  if (attempts.size() <= cap) return drawn;
  std::vector<std::size_t> order(attempts.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto rank = [&](std::size_t i) { return attempts[i].state == TaskState::succeeded ? 1 : 0; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return attempts[a].end - attempts[a].start > attempts[b].end - attempts[b].start;
  });
  for (std::size_t k = cap; k < order.size(); ++k) drawn[order[k]] = 0;
  return drawn;
}

// The inline style and script of the page; the data they draw lives in #chorus-data.
constexpr const char* kStyle = R"css(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:16px 20px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#555;margin:0 0 10px}
table.totals{border-collapse:collapse;margin:6px 0 10px}
table.totals td{padding:1px 14px 1px 0}
table.totals td:first-child{color:#666}
.note{background:#fff6d6;border:1px solid #e7d48a;padding:4px 8px;margin:6px 0;display:inline-block}
.legend{display:flex;flex-wrap:wrap;gap:14px;align-items:center;margin:6px 0 8px}
.legend span.sw{display:inline-block;width:16px;height:11px;margin-right:5px;vertical-align:-1px;border-radius:2px}
h2{font-size:15px;margin:14px 0 4px}
svg{display:block}
svg text{font-size:11px;fill:#444}
.bar{stroke:none}.thick .bar{stroke:#fff;stroke-width:1px}
.k-executable{fill:#4e79a7}.k-mpi{fill:#f28e2b}.k-function{fill:#59a14f}.k-service{fill:#b07aa1}
.s-failed,.s-timed_out,.thick .bar.s-failed,.thick .bar.s-timed_out{stroke:#d62728;stroke-width:2px;fill-opacity:.55}
.s-cancelled,.thick .bar.s-cancelled{stroke:#333;stroke-width:1px;stroke-dasharray:3 2;fill-opacity:.35}
.s-running,.thick .bar.s-running{fill-opacity:.45;stroke:#333;stroke-width:1px;stroke-dasharray:1 2}
.bar:hover{fill-opacity:1;stroke:#000;stroke-width:1px}
.lanebg{fill:#f5f5f5}.lanebg.alt{fill:#ececec}
.extra{fill:#fde0dd}
.grid{stroke:#ddd;stroke-width:1px}
.cap{stroke:#999;stroke-dasharray:4 3}
.util-area{fill:#9ecae1;fill-opacity:.6}.util-line{fill:none;stroke:#2171b5;stroke-width:1.5px}
)css";

constexpr const char* kScript = R"js(
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("chorus-data").textContent);
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
    });
  }
  function fmt(s) {
    if (s < 1) return (s * 1000).toFixed(0) + " ms";
    if (s < 120) return s.toFixed(s < 10 ? 2 : 1) + " s";
    if (s < 7200) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }
  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  var W = Math.max(900, Math.min(2400, (document.documentElement.clientWidth || 1400) - 40));
  var LEFT = 190, RIGHT = 20, plotW = W - LEFT - RIGHT;
  var span = D.span > 0 ? D.span : 1;
  function X(t) { return LEFT + (t / span) * plotW; }
  var ticks = [], step = niceStep(span / 8);
  for (var t = 0; t <= span + 1e-9; t += step) ticks.push(t);

  // Legend.
  document.getElementById("legend").innerHTML =
    D.kinds.map(function (k) {
      return '<span><svg width="18" height="12" style="display:inline;vertical-align:-1px">' +
        '<rect class="k-' + k + '" width="16" height="11" rx="2"></rect></svg> ' + k + "</span>";
    }).join("") +
    '<span><svg width="18" height="12" style="display:inline;vertical-align:-1px">' +
    '<rect class="k-executable s-failed" x="1" y="1" width="14" height="9"></rect></svg> ' +
    "failed / timed out (red outline)</span>" +
    '<span><svg width="18" height="12" style="display:inline;vertical-align:-1px">' +
    '<rect class="k-executable s-cancelled" x="1" y="1" width="14" height="9"></rect></svg> ' +
    "cancelled</span>" +
    '<span><svg width="18" height="12" style="display:inline;vertical-align:-1px">' +
    '<rect class="k-executable s-running" x="1" y="1" width="14" height="9"></rect></svg> ' +
    "no end in the journal</span>" +
    '<span><svg width="18" height="12" style="display:inline;vertical-align:-1px">' +
    '<rect class="util-area" width="16" height="11"></rect></svg> busy cores / total cores</span>';

  // Gantt: one lane per core per node, one group per node's in-process pool.
  var totalLanes = 0;
  D.groups.forEach(function (g) { totalLanes += g.lanes; });
  var laneH = Math.max(2, Math.min(18, Math.floor(620 / Math.max(1, totalLanes))));
  var GAP = 10, TOP = 18, y = TOP, offs = [], out = [];
  D.groups.forEach(function (g, gi) {
    offs.push(y);
    var h = g.lanes * laneH;
    for (var l = 0; l < g.lanes; ++l) {
      var cls = g.capacity > 0 && l >= g.capacity ? "extra" : "lanebg" + (l % 2 ? " alt" : "");
      out.push('<rect class="' + cls + '" x="' + LEFT + '" y="' + (y + l * laneH) + '" width="' +
               plotW + '" height="' + laneH + '"></rect>');
    }
    var label = g.pool ? "in-process pool" : g.capacity > 0 ? g.capacity + " cores" : "cores";
    out.push('<text x="' + (LEFT - 6) + '" y="' + (y + Math.min(h, 24) / 2 + 4) +
             '" text-anchor="end">' + esc(g.node || "(node not recorded)") + "</text>");
    out.push('<text x="' + (LEFT - 6) + '" y="' + (y + Math.min(h, 24) / 2 + 17) +
             '" text-anchor="end" style="fill:#888">' + label + "</text>");
    if (g.capacity > 0 && g.lanes > g.capacity) {
      var cy = y + g.capacity * laneH;
      out.push('<line class="cap" x1="' + LEFT + '" x2="' + (LEFT + plotW) + '" y1="' + cy +
               '" y2="' + cy + '"><title>lanes below this line: beyond the node\'s ' +
               g.capacity + " cores (a multi-core attempt found no consecutive free lanes)" +
               "</title></line>");
    }
    y += Math.max(h, g.pool ? 28 : 30) + GAP;
  });
  var ganttH = y;
  ticks.forEach(function (t) {
    out.push('<line class="grid" x1="' + X(t) + '" x2="' + X(t) + '" y1="' + (TOP - 4) +
             '" y2="' + (ganttH - GAP) + '"></line>');
    out.push('<text x="' + X(t) + '" y="' + (TOP - 6) + '" text-anchor="middle">' + fmt(t) +
             "</text>");
  });
  var bars = [];
  D.bars.forEach(function (b) {
    // [group, lane, lanes, start, duration, kind, state, attempt, name, detail]
    var x = X(b[3]), w = Math.max(1, X(b[3] + b[4]) - x);
    var by = offs[b[0]] + b[1] * laneH + (laneH > 4 ? 1 : 0);
    var bh = Math.max(1, b[2] * laneH - (laneH > 4 ? 2 : 0));
    var kind = D.kinds[b[5]], state = D.states[b[6]];
    var tip = b[8] + " (attempt " + b[7] + ")\n" + kind + ", " + state + ", " + fmt(b[4]) +
              (b[2] > 1 ? ", " + b[2] + " cores" : "") + (b[9] ? "\n" + b[9] : "");
    bars.push('<rect class="bar k-' + kind + " s-" + state + '" x="' + x.toFixed(1) + '" y="' +
              by + '" width="' + w.toFixed(1) + '" height="' + bh + '"><title>' + esc(tip) +
              "</title></rect>");
  });
  document.getElementById("gantt").innerHTML =
    '<svg xmlns="http://www.w3.org/2000/svg" class="' + (laneH > 5 ? "thick" : "thin") +
    '" width="' + W + '" height="' + ganttH + '">' +
    out.join("") + bars.join("") + "</svg>";

  // Utilization: a step chart of busy cores / total cores.
  var UH = 150, UT = 10, U = D.util, total = U.total > 0 ? U.total : 1, u = [];
  function Y(busy) { return UT + UH - (Math.min(busy, total) / total) * UH; }
  [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
    var yy = UT + UH - f * UH;
    u.push('<line class="grid" x1="' + LEFT + '" x2="' + (LEFT + plotW) + '" y1="' + yy +
           '" y2="' + yy + '"></line><text x="' + (LEFT - 6) + '" y="' + (yy + 4) +
           '" text-anchor="end">' + Math.round(f * 100) + "%</text>");
  });
  ticks.forEach(function (t) {
    u.push('<text x="' + X(t) + '" y="' + (UT + UH + 16) + '" text-anchor="middle">' + fmt(t) +
           "</text>");
  });
  if (U.steps.length) {
    // Each step: rise or fall at its time, then run to the next step's time.
    var d = "M" + X(U.steps[0][0]).toFixed(1) + "," + Y(0).toFixed(1);
    for (var i = 0; i < U.steps.length; ++i) {
      var s = U.steps[i], next = i + 1 < U.steps.length ? U.steps[i + 1][0] : span;
      d += "V" + Y(s[1]).toFixed(1) + "H" + X(next).toFixed(1);
    }
    var area = d + "V" + Y(0).toFixed(1) + "Z";
    u.push('<path class="util-area" d="' + area + '"></path><path class="util-line" d="' + d +
           '"></path>');
  }
  document.getElementById("util").innerHTML =
    '<svg xmlns="http://www.w3.org/2000/svg" width="' + W + '" height="' + (UT + UH + 24) + '">' +
    u.join("") + "</svg>";
})();
)js";

}  // namespace

std::vector<ReportAttempt> collect_attempts(std::span<const EventRecord> events, double end_time) {
  if (end_time == 0) {
    for (const auto& e : events) end_time = std::max(end_time, e.time);
  }
  std::vector<ReportAttempt> out;
  // An attempt is one entry of `out` per node it holds (an MPI task spread over nodes has several,
  // back to back): (first index, count).
  using Pieces = std::pair<std::size_t, std::size_t>;
  std::unordered_map<std::uint64_t, Pieces> open;  // (task, attempt) -> its pieces
  std::unordered_map<TaskId, Pieces> open_of_task;
  auto close = [&](Pieces p, double time, TaskState state, const std::string* detail) {
    for (std::size_t i = p.first; i < p.first + p.second; ++i) {
      out[i].end = std::max(out[i].start, time);
      if (detail == nullptr) continue;
      out[i].state = state;
      out[i].detail = *detail;
    }
  };
  for (const auto& e : events) {
    if (e.state == TaskState::running) {
      // A second 'running' event of the same attempt is a service passing its readiness probe.
      if (open.count(attempt_key(e.task, e.attempt)) != 0) continue;
      // A new attempt while an older one has no end: the coordinator that ran it was killed, so
      // its true end is unknown; it cannot have outlived the journal's next start of this task.
      if (auto it = open_of_task.find(e.task); it != open_of_task.end()) {
        close(it->second, e.time, TaskState::running, nullptr);
        open.erase(attempt_key(e.task, out[it->second.first].attempt));
      }
      auto where = split_node_field(e.node, std::max(0, e.cores));
      if (where.empty()) where.push_back({std::string(), std::max(0, e.cores)});
      const Pieces pieces{out.size(), where.size()};
      for (auto& w : where) {
        ReportAttempt& a = out.emplace_back();
        a.task = e.task;
        a.name = e.name;
        a.attempt = e.attempt;
        a.kind = e.kind;
        a.cores = std::max(0, w.cores);
        a.node = std::move(w.node);
        a.start = e.time;
        a.end = std::max(e.time, end_time);
        a.state = TaskState::running;
      }
      open[attempt_key(e.task, e.attempt)] = pieces;
      open_of_task[e.task] = pieces;
    } else if (is_terminal(e.state)) {
      auto it = open.find(attempt_key(e.task, e.attempt));
      if (it == open.end()) continue;
      close(it->second, e.time, e.state, &e.detail);
      open.erase(it);
      open_of_task.erase(e.task);
    }
  }
  return out;
}

ReportLayout pack_lanes(const std::vector<NodeInfo>& nodes, std::vector<ReportAttempt> attempts) {
  std::stable_sort(
      attempts.begin(), attempts.end(),
      [](const ReportAttempt& a, const ReportAttempt& b) { return a.start < b.start; });
  ReportLayout layout;

  // Node order: the run's nodes, then nodes only the events name. Each has a core group when it is
  // a known node or some attempt holds cores on it, and a pool group when a 0-core attempt ran.
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t> node_index;
  std::vector<int> capacity;
  for (const auto& n : nodes) {
    if (node_index.emplace(n.name, names.size()).second) {
      names.push_back(n.name);
      capacity.push_back(n.capacity.cores);
    }
  }
  for (const auto& a : attempts) {
    if (node_index.emplace(a.node, names.size()).second) {
      names.push_back(a.node);
      capacity.push_back(0);
    }
  }
  std::vector<char> needs_cores(names.size(), 0);
  std::vector<char> needs_pool(names.size(), 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) needs_cores[node_index[nodes[i].name]] = 1;
  for (const auto& a : attempts) (a.cores > 0 ? needs_cores : needs_pool)[node_index[a.node]] = 1;

  std::vector<int> core_group(names.size(), -1);
  std::vector<int> pool_group(names.size(), -1);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (needs_cores[i] != 0) {
      core_group[i] = static_cast<int>(layout.groups.size());
      layout.groups.push_back(LaneGroup{names[i], false, std::max(0, capacity[i]), 0});
    }
    if (needs_pool[i] != 0) {
      pool_group[i] = static_cast<int>(layout.groups.size());
      layout.groups.push_back(LaneGroup{names[i], true, 0, 0});
    }
  }

  // lane_end[g][l]: when lane l of group g becomes free. Lanes are created on first use, which
  // gives the same first-fit result as starting with `capacity` free lanes.
  std::vector<std::vector<double>> lane_end(layout.groups.size());
  for (auto& a : attempts) {
    const std::size_t node = node_index[a.node];
    const int g = a.cores > 0 ? core_group[node] : pool_group[node];
    auto& ends = lane_end[static_cast<std::size_t>(g)];
    const std::size_t width = static_cast<std::size_t>(std::max(1, a.cores));
    std::size_t run = 0;  // free lanes ending at l
    std::size_t first = ends.size();
    for (std::size_t l = 0; l < ends.size(); ++l) {
      run = ends[l] <= a.start ? run + 1 : 0;
      if (run == width) {
        first = l + 1 - width;
        break;
      }
    }
    if (first == ends.size()) first = ends.size() - run;  // extend the trailing free run
    if (ends.size() < first + width) ends.resize(first + width, 0.0);
    for (std::size_t l = first; l < first + width; ++l) ends[l] = a.end;
    a.group = g;
    a.lane = static_cast<int>(first);
  }
  for (std::size_t g = 0; g < layout.groups.size(); ++g) {
    LaneGroup& group = layout.groups[g];
    group.lanes = static_cast<int>(lane_end[g].size());
    if (!group.pool && group.capacity <= kMaxIdleLanes) {
      group.lanes = std::max(group.lanes, group.capacity);
    }
    if (group.pool) group.lanes = std::max(group.lanes, 1);
  }
  layout.attempts = std::move(attempts);
  return layout;
}

std::string render_html_report(const RunInfo& run, std::span<const EventRecord> events,
                               const HtmlReportOptions& options) {
  ReportLayout layout = pack_lanes(run.nodes, collect_attempts(events, options.end_time));
  const auto& attempts = layout.attempts;

  double t0 = attempts.empty() ? run.created : attempts.front().start;
  double t1 = t0;
  for (const auto& a : attempts) t1 = std::max(t1, a.end);
  const double span = t1 - t0;

  // Capacity: the run's recorded nodes; without them (older journals) or when unbounded
  // (--oversubscribe), utilization is measured against the peak instead, and the page says so.
  long long capacity = 0;
  for (const auto& n : run.nodes) capacity += n.capacity.cores;
  Utilization util = utilization(attempts, t0);
  std::string basis = "the allocation's cores";
  long long total = capacity;
  if (capacity <= 0 || capacity >= kUnboundedCores) {
    total = util.peak;
    basis = capacity <= 0 ? "the peak busy cores (the journal did not record the node capacity)"
                          : "the peak busy cores (the run was not bounded by cores)";
  }
  const double mean_util =
      total > 0 && span > 0 ? util.core_seconds / (static_cast<double>(total) * span) : 0;

  std::size_t by_state[std::size(kStates)] = {};
  std::size_t by_kind[std::size(kKinds)] = {};
  std::unordered_map<TaskId, char> tasks;
  for (const auto& a : attempts) {
    ++by_state[index_of(kStates, a.state)];
    ++by_kind[index_of(kKinds, a.kind)];
    tasks.emplace(a.task, 0);
  }
  const std::vector<char> drawn = choose_bars(attempts, options.max_bars);
  const std::size_t n_drawn = static_cast<std::size_t>(std::count(drawn.begin(), drawn.end(), 1));

  std::string data;
  data.reserve(256 + attempts.size() * 80);
  data += "{\"run\":";
  append_json_string(data, run.id);
  data += ",\"span\":";
  append_number(data, span);
  data += ",\"kinds\":[";
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (i > 0) data += ',';
    append_json_string(data, to_string(kKinds[i]));
  }
  data += "],\"states\":[";
  for (std::size_t i = 0; i < std::size(kStates); ++i) {
    if (i > 0) data += ',';
    append_json_string(data, to_string(kStates[i]));
  }
  data += "],\"groups\":[";
  for (std::size_t i = 0; i < layout.groups.size(); ++i) {
    const auto& g = layout.groups[i];
    if (i > 0) data += ',';
    data += "{\"node\":";
    append_json_string(data, g.node);
    data += ",\"pool\":";
    data += g.pool ? "true" : "false";
    data += ",\"capacity\":" + std::to_string(g.capacity) +
            ",\"lanes\":" + std::to_string(g.lanes) + "}";
  }
  data += "],\"bars\":[";
  bool first_bar = true;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    if (drawn[i] == 0) continue;
    const auto& a = attempts[i];
    if (!first_bar) data += ',';
    first_bar = false;
    data += '[' + std::to_string(a.group) + ',' + std::to_string(a.lane) + ',' +
            std::to_string(std::max(1, a.cores)) + ',';
    append_number(data, a.start - t0);
    data += ',';
    append_number(data, a.end - a.start);
    data += ',' + std::to_string(index_of(kKinds, a.kind)) + ',' +
            std::to_string(index_of(kStates, a.state)) + ',' + std::to_string(a.attempt) + ',';
    append_json_string(data, a.name);
    data += ',';
    append_json_string(data, a.detail);
    data += ']';
  }
  data += "],\"util\":{\"total\":" + std::to_string(total) + ",\"steps\":[";
  for (std::size_t i = 0; i < util.steps.size(); ++i) {
    if (i > 0) data += ',';
    data += '[';
    append_number(data, util.steps[i].first);
    data += ',' + std::to_string(util.steps[i].second) + ']';
  }
  data += "]}}";

  const auto count = [&](TaskState s) { return by_state[index_of(kStates, s)]; };
  std::string kinds_text;
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (by_kind[i] == 0) continue;
    if (!kinds_text.empty()) kinds_text += ", ";
    kinds_text += std::to_string(by_kind[i]) + " " + to_string(kKinds[i]);
  }
  if (kinds_text.empty()) kinds_text = "none";
  char util_text[96];
  std::snprintf(util_text, sizeof util_text, "%.1f%% mean, peak %d of %lld cores", mean_util * 100,
                util.peak, total);

  std::string html;
  html.reserve(data.size() + 16'384);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Chorus "
      "report: ";
  html += html_escape(run.id);
  html += "</title>\n<style>";
  html += kStyle;
  html += "</style>\n</head>\n<body>\n<h1>Chorus run ";
  html += html_escape(run.id);
  html += "</h1>\n<p class=\"sub\">workflow <b>" + html_escape(run.workflow_name) + "</b>";
  if (!run.workflow_path.empty()) html += " (" + html_escape(run.workflow_path) + ")";
  html += " &middot; status <b id=\"run-status\">" + std::string(to_string(run.status)) + "</b>";
  if (!run.host.empty()) html += " &middot; host " + html_escape(run.host);
  html += " &middot; created " + format_utc(run.created) + "</p>\n";
  html += "<table class=\"totals\">\n";
  html += "<tr><td>tasks</td><td>" + std::to_string(tasks.size()) + " started of " +
          std::to_string(run.total_tasks) + "</td></tr>\n";
  html += "<tr><td>attempts</td><td id=\"attempts\">" + std::to_string(attempts.size()) + " (" +
          std::to_string(count(TaskState::succeeded)) + " succeeded, " +
          std::to_string(count(TaskState::failed)) + " failed, " +
          std::to_string(count(TaskState::timed_out)) + " timed out, " +
          std::to_string(count(TaskState::cancelled)) + " cancelled, " +
          std::to_string(count(TaskState::running)) + " without an end) &middot; " + kinds_text +
          "</td></tr>\n";
  html += "<tr><td>span</td><td>" + format_seconds(span) + " from the first start</td></tr>\n";
  html += "<tr><td>utilization</td><td>" + std::string(util_text) + " (relative to " + basis +
          ")</td></tr>\n";
  html += "</table>\n";
  if (n_drawn < attempts.size()) {
    html += "<p class=\"note\" id=\"capped\">The chart draws " + std::to_string(n_drawn) + " of " +
            std::to_string(attempts.size()) +
            " attempts: every one that did not succeed and the longest successful ones. The " +
            std::to_string(attempts.size() - n_drawn) +
            " shorter successful attempts are left out of the chart but counted in the "
            "utilization below.</p>\n";
  }
  html +=
      "<noscript><p class=\"note\">The charts are drawn by an inline script; enable "
      "JavaScript to see them.</p></noscript>\n";
  html += "<div class=\"legend\" id=\"legend\"></div>\n";
  html += "<h2>Attempts on cores over time (one lane per core)</h2>\n<div id=\"gantt\"></div>\n";
  html += "<h2>Utilization: busy cores / " + std::to_string(total) +
          " cores</h2>\n<div id=\"util\"></div>\n";
  html += "<script type=\"application/json\" id=\"chorus-data\">";
  html += data;
  html += "</script>\n<script>";
  html += kScript;
  html += "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace chorus
