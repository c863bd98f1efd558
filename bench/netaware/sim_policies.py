#!/usr/bin/env python3
"""Placement policies side by side on the simulator's modelled network (`chorus simulate
--network gen:... --data ...`): the same workload, network and background under each placement,
mean and p90 job response (small and large jobs), medians over --networks background schedules.

Needs a build with the network-aware policy and the simulator passing each decision's time to
PlacementStep (net/model merged with main: PlacementStep::place(task, state, now)).

    bench/netaware/sim_policies.py [--build build] [--networks 3]
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

POLICIES = ["first-fit", "least-allocated", "kube-default", "random", "network-cost", "network-aware"]


def parse_row(text):
    # "uwfq  27.17s  37.38s  87.03s ..." -> the first four figures (small mean, small p90, large mean, large p90)
    line = [l for l in text.strip().splitlines() if l.startswith("uwfq")][-1]
    nums = re.findall(r"(-|[0-9.]+)s?\s", line + " ")
    vals = [float(n) if n != "-" else float("nan") for n in nums[:4]]
    return dict(zip(["small_mean_s", "small_p90_s", "large_mean_s", "large_p90_s"], vals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--networks", type=int, default=3)
    ap.add_argument("--workload", default="gen:2large2small")
    ap.add_argument("--scale", default="0.05")
    ap.add_argument("--cluster", default="64x4")
    ap.add_argument("--note", default="", help="what build this is (recorded in the result)")
    a = ap.parse_args()
    chorus = os.path.join(a.build, "bin", "chorus")
    runs = []
    for n in range(1, a.networks + 1):
        for p in POLICIES:
            _, proc = benchlib.timed([chorus, "simulate", "--workload", a.workload, "--scale", a.scale,
                                      "--cluster", a.cluster, "--network", f"gen:sources=2,seed={n}",
                                      "--data", f"in=1:200,out=0:20,seed={n}", "--placement", p])
            runs.append({"network": n, "placement": p, **parse_row(proc.stdout)})
    lines = [f"`{a.workload}` x{a.scale} on {a.cluster}, every task moving 1-200 MB in and 0-20 MB out; "
             f"medians over {a.networks} background schedules (gen:sources=2,seed=N). network-aware: "
             "analytic estimate (no model).", "",
             "| placement | small mean | small p90 | large mean | large p90 |", "|---|---|---|---|---|"]
    summary = {}
    for p in POLICIES:
        rs = [r for r in runs if r["placement"] == p]
        s = {k: benchlib.median([r[k] for r in rs]) for k in ("small_mean_s", "small_p90_s", "large_mean_s", "large_p90_s")}
        summary[p] = s
        lines.append(f"| {p} | {s['small_mean_s']:.1f} s | {s['small_p90_s']:.1f} s | {s['large_mean_s']:.1f} s | "
                     f"{s['large_p90_s']:.1f} s |")
    table = "\n".join(lines)
    benchlib.write_result("netaware_sim_policies", {"runs": runs, "summary": summary, "build": a.note}, table)
    print(table)


if __name__ == "__main__":
    main()
