#!/usr/bin/env python3
"""The quorum policies' call costs (issue 15: at most 2 us per call), from chorus_micro_bench's
quorum_* benchmarks (bench/micro/bench_quorum_policies.cpp), medians of repetitions, every
policy in the same run (wait-all and static are the baselines). Writes
bench/results/quorum_policies.{json,md} and the README's results:quorum_policies section.

    python3 bench/quorum_micro.py --build build [--repetitions 5]
"""
import argparse
import json
import os
import subprocess

from benchlib import write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--repetitions", type=int, default=5)
ap.add_argument("--min-time", default="0.3")
args = ap.parse_args()

exe = os.path.join(os.path.abspath(args.build), "bench", "chorus_micro_bench")
out = subprocess.run(
    [exe, "--benchmark_filter=^quorum_", f"--benchmark_repetitions={args.repetitions}",
     f"--benchmark_min_time={args.min_time}", "--benchmark_report_aggregates_only=true",
     "--benchmark_format=json"],
    capture_output=True, text=True, check=True).stdout
data = json.loads(out)
cost = {}  # (policy, n) -> {kind: ns per call}, {round: ns per round}
for b in data["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    parts = b["run_name"].split("/")  # quorum_<kind>/<policy>/<n>[/manual_time]
    kind, policy, n = parts[0][len("quorum_"):], parts[1], int(parts[2])
    row = cost.setdefault((policy, n), {})
    per_call = 1e9 / b["items_per_second"]
    if kind == "round":
        row["round_ns"] = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        row["mean_call_ns"] = per_call
    else:
        row[kind + "_ns"] = per_call
order = ["wait-all", "static", "adasync", "dbw", "dbw+"]
lines = [f"| policy | n | round | mean call | begin | on_arrival | end (timed) | end (interrupt) | (median of {args.repetitions}) |",
         "|---|---|---|---|---|---|---|---|---|"]
rows = []
for (policy, n) in sorted(cost, key=lambda k: (k[1], order.index(k[0]) if k[0] in order else 99)):
    r = cost[(policy, n)]
    worst = max(r.get(k, 0) for k in ("begin_ns", "arrival_ns", "end_ns", "endinterrupt_ns",
                                      "mean_call_ns"))
    rows.append(dict(policy=policy, n=n, **r, worst_call_ns=worst, under_2us=worst <= 2000))
    lines.append(f"| {policy} | {n} | {r['round_ns']:,.0f} ns | {r['mean_call_ns']:,.0f} ns | "
                 f"{r['begin_ns']:,.0f} ns | {r['arrival_ns']:,.0f} ns | {r['end_ns']:,.0f} ns | "
                 f"{r['endinterrupt_ns']:,.0f} ns | "
                 f"{'<= 2 us' if worst <= 2000 else 'OVER 2 us'} |")
table = "\n".join(lines)
write_result("quorum_policies", {"rows": rows, "context": data.get("context", {})}, table)
print(table)
