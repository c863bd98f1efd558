#!/usr/bin/env python3
"""Function-task throughput and memory through the embed API, journal on
(bench/tools/embed_noop.cpp): 1,000,000 no-op tasks, repeated; and the peak resident size of a
run of 100,000 queued no-op tasks (bytes per task). Target (issue 2): >= 100,000 tasks/s.
For scale: RHAPSODY ~11,000 tasks/s, Ray ~21,000/s, Dask 200 us - 1 ms per task.

    python3 bench/function_tasks.py --build build [--tasks 1000000] [--repeats 5]
"""
import argparse
import json
import os
import shutil
import tempfile

from benchlib import median, timed, write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=1000000)
ap.add_argument("--memory-tasks", type=int, default=100000)
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()

tool = os.path.join(os.path.abspath(args.build), "bench", "embed_noop")
work = tempfile.mkdtemp(prefix="chorus-fn-bench-")
runs = []
for r in range(args.repeats):
    state = os.path.join(work, f"state-{r}")
    _, proc = timed([tool, str(args.tasks), state])
    row = json.loads(proc.stdout)
    runs.append(row)
    print(json.dumps(row), flush=True)
    shutil.rmtree(state, ignore_errors=True)

mem_runs = []
for r in range(3):
    state = os.path.join(work, f"mem-{r}")
    _, proc = timed([tool, str(args.memory_tasks), state])
    mem_runs.append(json.loads(proc.stdout))
    shutil.rmtree(state, ignore_errors=True)

rate = median([r["tasks_per_s"] for r in runs])
us = median([r["us_per_task"] for r in runs])
bpt = median([r["bytes_per_task"] for r in mem_runs])
rss = median([r["peak_rss_bytes"] for r in mem_runs])
summary = {
    "tasks": args.tasks,
    "tasks_per_s_median": rate,
    "us_per_task_median": us,
    "memory_tasks": args.memory_tasks,
    "peak_rss_bytes_median": rss,
    "bytes_per_task_median": bpt,
    "target_tasks_per_s": 100000,
    "runs": runs,
    "memory_runs": mem_runs,
}
table = (
    "| workload | tasks/s (median) | us/task | peak RSS | bytes/task | target |\n"
    "|---|---|---|---|---|---|\n"
    f"| {args.tasks:,} no-op function tasks, journal on | {rate:,.0f} | {us:.2f} | - | - | >= 100,000/s |\n"
    f"| {args.memory_tasks:,} queued no-op tasks | - | - | {rss/2**20:.1f} MiB | {bpt:,.0f} | report |"
)
write_result("function_tasks", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
