#!/usr/bin/env python3
"""Coupling (issue 3): round trips from fine-grained tasks to a service replica, through Chorus
and by hand, side by side in the same run.

Chorus side: `chorus run --cores C` of a workflow with a service `echo` (bench/coupling/
coupling_echo, `ready: {stdout: ...}` capturing the endpoint it prints) and K tasks `uses: [echo]`,
each running coupling_client for N round trips against CHORUS_SERVICE_ECHO. Baseline: the same
coupling_echo started by hand and the same K clients run by hand with the same concurrency
(C - 1: the service holds one core), no Chorus. Both transports: tcp://127.0.0.1 (a free port) and
ipc:// (a socket file); the order of the two sides alternates per repeat.

Per side and repeat: the median of the K per-task p50s, the largest per-task p99 (with equal N
per task this bounds the pooled p99 from above: at most 1% of each task's samples exceed it) and
the median per-task p99, and the aggregate requests/s = K * N / (last client end - first client
start) (journal for Chorus, wall clock by hand; both include starting the K client processes).
Target: p50 <= 0.1 ms.

    python3 bench/services/coupling.py --build build [--tasks 20] [--n 2000] [--repeats 5]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import svclib
from benchlib import median, write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=20, help="K client tasks")
ap.add_argument("--n", type=int, default=2000, help="round trips per client")
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--cores", type=int, default=2, help="chorus run --cores (clients in flight: C-1)")
ap.add_argument("--transports", default="tcp,ipc")
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = svclib.program(build, "bin", "chorus")
echo = svclib.program(build, "bench", "coupling", "coupling_echo")
client = svclib.program(build, "bench", "coupling", "coupling_client")
work = tempfile.mkdtemp(prefix="chorus-coupling-bench-")
in_flight = max(1, args.cores - 1)
load_before = svclib.loadavg()


def bind_of(transport, tag):
    if transport == "tcp":
        return "tcp://127.0.0.1:*"
    return f"ipc://{work}/echo-{tag}.ipc"


def summarize(results, seconds):
    return {
        "p50_us": median([r["p50_us"] for r in results]),
        "p99_max_us": max(r["p99_us"] for r in results),
        "p99_median_us": median([r["p99_us"] for r in results]),
        "client_rps_median": median([r["rps"] for r in results]),
        "aggregate_rps": len(results) * args.n / seconds,
        "tasks": len(results),
    }


def chorus_side(transport, r):
    wf = os.path.join(work, f"coupling-{transport}-{r}.yaml")
    with open(wf, "w") as f:
        f.write(
            "name: coupling\n"
            "services:\n"
            "  - name: echo\n"
            f"    command: {svclib.yaml_list([echo, bind_of(transport, f'chorus-{r}')])}\n"
            "    cores: 1\n"
            '    ready: {stdout: "listening on ((?:tcp|ipc)://\\\\S+)", timeout: 30s}\n'
            "tasks:\n"
            "  - name: client\n"
            f'    foreach: {{i: "range(0, {args.tasks})"}}\n'
            "    uses: [echo]\n"
            f"    command: {svclib.yaml_list([client, '-n', str(args.n)])}\n")
    state = os.path.join(work, f"state-{transport}-{r}")
    wall, argv = svclib.chorus_run(chorus, wf, state, cores=args.cores)
    results = [json.loads(open(p).read()) for p in svclib.logs(state, "client*.out")]
    if len(results) != args.tasks:
        raise RuntimeError(f"{len(results)} client results of {args.tasks} in {state}")
    start, end, _ = svclib.span(svclib.journal(state), "client[")
    endpoints = {res["endpoint"] for res in results}
    shutil.rmtree(state, ignore_errors=True)
    out = summarize(results, end - start)
    out.update(wall_s=wall, endpoint=endpoints.pop() if len(endpoints) == 1 else sorted(endpoints))
    return out, argv


def baseline_side(transport, r):
    proc = subprocess.Popen([echo, bind_of(transport, f"hand-{r}")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"listening on (\S+)", line)
        if not m:
            raise RuntimeError(f"coupling_echo did not start: {line!r} {proc.stderr.read()}")
        endpoint = m.group(1)
        results, running = [], []
        t0 = time.perf_counter()
        for _ in range(args.tasks):
            if len(running) == in_flight:
                results.append(finish(running.pop(0)))
            running.append(subprocess.Popen([client, "--endpoint", endpoint, "-n", str(args.n)],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
        while running:
            results.append(finish(running.pop(0)))
        seconds = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait()
    out = summarize(results, seconds)
    out["endpoint"] = endpoint
    return out


def finish(p):
    out, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"coupling_client failed ({p.returncode}): {err}")
    return json.loads(out)


transports = [t for t in args.transports.split(",") if t]
runs = []
chorus_argv = None
for r in range(args.repeats):
    for transport in transports:
        order = ["baseline", "chorus"] if r % 2 == 0 else ["chorus", "baseline"]
        row = {"repeat": r, "transport": transport, "loadavg": svclib.loadavg()}
        for side in order:
            if side == "chorus":
                row["chorus"], chorus_argv = chorus_side(transport, r)
            else:
                row["baseline"] = baseline_side(transport, r)
        row["p50_ratio"] = row["chorus"]["p50_us"] / row["baseline"]["p50_us"]
        row["rps_ratio"] = row["chorus"]["aggregate_rps"] / row["baseline"]["aggregate_rps"]
        runs.append(row)
        print(json.dumps(row), flush=True)

summary = {"command": svclib.command_line(), "chorus_argv_example": chorus_argv,
           "commit": svclib.git_head(os.path.dirname(os.path.dirname(svclib.HERE))),
           "tasks": args.tasks, "n": args.n, "repeats": args.repeats, "cores": args.cores,
           "clients_in_flight": in_flight, "target_p50_us": 100.0,
           "loadavg_before": load_before, "loadavg_after": svclib.loadavg(), "by_transport": {}}
lines = [
    "### Coupling: fine-grained tasks -> a service replica (issue 3; target p50 <= 0.1 ms)",
    f"K = {args.tasks} tasks x N = {args.n} round trips (64 B), {in_flight} client(s) in flight, "
    f"`chorus run --cores {args.cores}`; medians of {args.repeats} repeats (load average "
    f"{load_before[0]:.1f} before, {summary['loadavg_after'][0]:.1f} after)",
    "",
    "| transport | side | p50 (us) | p99 max / median of tasks (us) | requests/s aggregate | "
    "p50 vs by hand | req/s vs by hand | target |",
    "|---|---|---|---|---|---|---|---|",
]
for transport in transports:
    rows = [x for x in runs if x["transport"] == transport]
    agg = {}
    for side in ("baseline", "chorus"):
        agg[side] = {k: median([x[side][k] for x in rows])
                     for k in ("p50_us", "p99_max_us", "p99_median_us", "aggregate_rps",
                               "client_rps_median")}
    agg["p50_ratio"] = median([x["p50_ratio"] for x in rows])
    agg["rps_ratio"] = median([x["rps_ratio"] for x in rows])
    summary["by_transport"][transport] = agg
    for side, label in (("baseline", "by hand, no Chorus"), ("chorus", "`chorus run`, `uses: [echo]`")):
        a = agg[side]
        ratios = (f"{agg['p50_ratio']:.2f}x | {agg['rps_ratio']:.2f}" if side == "chorus"
                  else "- | -")
        target = ("p50 <= 100 us: " + ("met" if a["p50_us"] <= 100 else "missed")) \
            if side == "chorus" else "-"
        lines.append(f"| {transport} | {label} | {a['p50_us']:.1f} | {a['p99_max_us']:.0f} / "
                     f"{a['p99_median_us']:.0f} | {a['aggregate_rps']:,.0f} | {ratios} | {target} |")
lines.append("")
lines.append(f"`{summary['command']}`")
summary["runs"] = runs
table = "\n".join(lines)
write_result("coupling", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
