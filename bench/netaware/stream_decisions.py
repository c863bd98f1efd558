#!/usr/bin/env python3
"""What a live stream's placement decisions looked like, from the run's journal: how many nodes
each decision could choose from, and how the chosen node's predicted time compares with the
time the job took there, per node.

    python3 bench/netaware/drive_policies.py --build build --ground-truth \\
        bench/results/netaware_ground_truth_r4.json --mode stream --policies network-aware \\
        --state DIR --name NAME
    bench/netaware/stream_decisions.py --state DIR [--chorus build/bin/chorus] [--run RUN]

Reads `chorus why --json` for every job j0, j1, ... of the run (default: the newest in --state).
"""
import argparse
import json
import math
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", required=True)
    ap.add_argument("--chorus", default="build/bin/chorus")
    ap.add_argument("--run")
    a = ap.parse_args()
    run = a.run
    if run is None:
        lines = subprocess.run([a.chorus, "list", "--state", a.state], capture_output=True,
                               text=True, check=True).stdout.splitlines()[1:]
        if not lines:
            raise SystemExit("no run in %s" % a.state)
        run = lines[0].split()[0]
    decisions = []
    k = 0
    while True:
        r = subprocess.run([a.chorus, "why", "--state", a.state, run, "j%d" % k, "--json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            break
        decisions.append(json.loads(r.stdout))
        k += 1
    if not decisions:
        raise SystemExit("no job j0.. with a placement record in run %s" % run)
    counts = {}
    ratios = {}
    for d in decisions:
        counts[len(d["candidates"])] = counts.get(len(d["candidates"]), 0) + 1
        chosen = next(c for c in d["candidates"] if c["node"] == d["node"])
        if d.get("actual_s") and chosen.get("predicted_s"):
            ratios.setdefault(d["node"], []).append(d["actual_s"] / chosen["predicted_s"])
    print("run %s: %d decisions" % (run, len(decisions)))
    print("free nodes to choose from: " + ", ".join(
        "%d: %d decisions" % (n, counts[n]) for n in sorted(counts)))
    every = []
    for node in sorted(ratios):
        v = ratios[node]
        every += v
        print("%s: %d jobs, actual / predicted median %.2f, mean |log| %.2f" % (
            node, len(v), statistics.median(v), statistics.mean(abs(math.log(x)) for x in v)))
    print("all: actual / predicted median %.2f, MAPE %.0f%%" % (
        statistics.median(every), 100 * statistics.mean(abs(x - 1) for x in every)))


if __name__ == "__main__":
    main()
