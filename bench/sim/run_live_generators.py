#!/usr/bin/env python3
"""One instance of each new generator (issue 18) run live beside the simulator.

For bursty and zipf (--scale 0.1 of the defaults: bursty's arrivals over 60 s, zipf's 60 jobs
over 40 s; 1 s pieces) and each policy (fifo, fair, uwfq) it runs `chorus_live_generators MIX
POLICY` (bench/sim/live_generators.cpp: the instance through run_workflow for real, 1-core
function tasks sleeping their runtimes on one node of 32 cores, arrivals from 0-core clock tasks,
one per job, all started at once; and the simulator's replay of the same instance, same policy,
arrivals as the clocks released them), --repeats times,
and reports the small and large jobs' mean response live, simulated, and live / simulated
(target: within 10%). Medians over the repeats. Python 3 standard library only.

    cmake --build build --target chorus_live_generators
    bench/sim/run_live_generators.py [--repeats 1] [--scale 0.1] [--mixes bursty,zipf]
                                     [--piece-order listed|interleaved]

Anything but the default --piece-order writes live_generators_<order>.{json,md}.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import timed, write_result  # noqa: E402

MIXES = ["bursty", "zipf"]
POLICIES = ["fifo", "fair", "uwfq"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", default=os.path.join(ROOT, "build", "bench", "chorus_live_generators"))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--mixes", default=",".join(MIXES))
    ap.add_argument("--piece-order", default="listed", choices=["listed", "interleaved"])
    ap.add_argument("--lane", default="",
                    help="also run uwfq with lane_cores=N or auto (the short-job lane) beside")
    args = ap.parse_args()
    if args.lane == "0":
        args.lane = ""
    mixes = args.mixes.split(",")
    policies = POLICIES + ([f"uwfq-lane{args.lane}"] if args.lane else [])
    runs = {m: {p: [] for p in policies} for m in mixes}
    with tempfile.TemporaryDirectory(prefix="chorus-live-gen-") as state:
        for r in range(args.repeats):
            for m in mixes:
                for p in policies:  # interleaved, so the machine's load drifts over all alike
                    cmd = [args.driver, m, p.split("-")[0], "--scale", str(args.scale), "--state",
                           os.path.join(state, f"{m}-{p}-{r}"), "--piece-order", args.piece_order]
                    if p.startswith("uwfq-lane"):
                        cmd += ["--lane", str(args.lane)]
                    _, proc = timed(cmd)
                    d = json.loads(proc.stdout)
                    runs[m][p].append(d)
                    print(f"{m} {p} repeat {r + 1}: small live {d['live_small_mean_s']:.3f} s, "
                          f"simulated {d['sim_small_mean_s']:.3f} s", file=sys.stderr)
    lines = [
        f"`bench/sim/run_live_generators.py --repeats {args.repeats} --scale {args.scale} --mixes {args.mixes} --piece-order {args.piece_order}"
        + (f" --lane {args.lane}" if args.lane else "") + "`: one "
        f"instance of each generator (seed 1, 1 s pieces, {args.piece_order}) run live through run_workflow (1-core "
        "function tasks sleeping their runtimes, one node of 32 cores, arrivals from 0-core clock "
        "tasks) beside the simulator's replay of the same instance; mean response in seconds, "
        f"median of {args.repeats}. Target: live within 10% of simulated.",
        "",
        "| instance | policy | jobs / tasks | small live | small simulated | live / sim | "
        "large live | large simulated | live / sim |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    summary = {}
    for m in mixes:
        for p in policies:
            rs = runs[m][p]
            med = {k: statistics.median(x[k] for x in rs) for k in
                   ("live_small_mean_s", "sim_small_mean_s", "live_large_mean_s", "sim_large_mean_s")}
            rs0 = rs[0]
            small_ratio = med["live_small_mean_s"] / med["sim_small_mean_s"]
            large_ratio = med["live_large_mean_s"] / med["sim_large_mean_s"]
            summary[f"{m}/{p}"] = dict(med, small_ratio=small_ratio, large_ratio=large_ratio)
            lines.append(f"| {m} x{args.scale} | {p} | {rs0['jobs']} / {rs0['tasks']} | "
                         f"{med['live_small_mean_s']:.3f} | {med['sim_small_mean_s']:.3f} | "
                         f"{small_ratio:.3f} | {med['live_large_mean_s']:.3f} | "
                         f"{med['sim_large_mean_s']:.3f} | {large_ratio:.3f} |")
    worst = max(abs(v["small_ratio"] - 1) for v in summary.values())
    lines += ["", f"Largest small-job deviation live vs simulated: {100 * worst:.1f}%."]
    table = "\n".join(lines)
    name = "live_generators" if args.piece_order == "listed" else \
        "live_generators_" + args.piece_order
    if args.lane:
        name += f"_lane{args.lane}"
    write_result(name, {"scale": args.scale, "repeats": args.repeats,
                        "piece_order": args.piece_order, "runs": runs, "summary": summary}, table)
    print(table)


if __name__ == "__main__":
    main()
