#!/usr/bin/env python3
"""Google Benchmark micro figures (parse + validate, journal append, in-process pool), median of
repetitions, written to bench/results/micro.json and the table in bench/README.md.

    python3 bench/micro_figures.py --build build [--repetitions 5]
"""
import argparse
import json
import os
import subprocess

from benchlib import write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--repetitions", type=int, default=5)
args = ap.parse_args()

exe = os.path.join(os.path.abspath(args.build), "bench", "chorus_micro_bench")
out = subprocess.run(
    [exe, f"--benchmark_repetitions={args.repetitions}", "--benchmark_report_aggregates_only=true",
     "--benchmark_format=json"],
    capture_output=True, text=True, check=True).stdout
data = json.loads(out)
rows = []
for b in data["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    rate = b.get("items_per_second")
    rows.append({
        "name": b["run_name"],
        "real_time": b["real_time"],
        "cpu_time": b["cpu_time"],
        "time_unit": b["time_unit"],
        "items_per_second": rate,
    })
lines = ["| benchmark (median of %d) | wall | CPU | items/s |" % args.repetitions, "|---|---|---|---|"]
for r in rows:
    rate = f"{r['items_per_second']:,.0f}" if r["items_per_second"] else "-"
    lines.append(f"| `{r['name']}` | {r['real_time']:,.1f} {r['time_unit']} | "
                 f"{r['cpu_time']:,.1f} {r['time_unit']} | {rate} |")
table = "\n".join(lines)
write_result("micro", {"benchmarks": rows, "context": data.get("context", {})}, table)
print(table)
