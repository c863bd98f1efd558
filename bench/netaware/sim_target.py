#!/usr/bin/env python3
"""Which target the completion-time model fits: log(seconds) or seconds (docs/jct-model.md).

Rows from `chorus simulate --network gen:...,seed=N --data ... --rows-out` for N background
schedules (networks) under two placements (first-fit, least-allocated: the rows see different
nodes), then `chorus model train --rows ... --target T --seed S` for both targets and --splits
split seeds (a quarter of the schedules held out, never rows of a schedule on both sides).
Reports the holdout MAE and MAPE of each target (medians over the splits) beside the analytic
estimate's on the same rows. Writes results/netaware_sim_target.{json,md} and the README section.

    bench/netaware/sim_target.py [--build build] [--networks 8] [--splits 3]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--networks", type=int, default=8)
    ap.add_argument("--splits", type=int, default=3)
    a = ap.parse_args()
    chorus = os.path.join(a.build, "bin", "chorus")
    results = []
    with tempfile.TemporaryDirectory(prefix="sim-target-") as tmp:
        files = []
        for n in range(1, a.networks + 1):
            for placement in ("first-fit", "least-allocated"):
                path = os.path.join(tmp, f"rows-{n}-{placement}.csv")
                benchlib.timed([chorus, "simulate", "--workload", "gen:4supersmall", "--scale", "0.1",
                                "--cluster", "8x4", "--network", f"gen:sources=2,seed={n}",
                                "--data", f"in=1:200,out=0:20,seed={n}", "--placement", placement,
                                "--seed", str(n), "--rows-out", path])
                files.append(path)
        rows_args = [arg for f in files for arg in ("--rows", f)]
        for target in ("log_seconds", "seconds"):
            for split in range(1, a.splits + 1):
                _, proc = benchlib.timed([chorus, "model", "train", *rows_args, "--target", target,
                                          "--seed", str(split), "--json", "-o", os.path.join(tmp, "m.json")])
                r = json.loads(proc.stdout)
                results.append({"target": target, "seed": split, **r})
    first = results[0]
    lines = [
        f"{first['rows']} rows from {first['runs']} background schedules (simulated 8x4, 2 sources); "
        f"{first['holdout']['runs']} schedules held out per split, medians over {a.splits} splits.",
        "",
        "| target | holdout MAE | holdout MAPE | analytic estimate MAE | analytic MAPE |",
        "|---|---|---|---|---|",
    ]
    summary = {}
    for target in ("log_seconds", "seconds"):
        rs = [r for r in results if r["target"] == target]
        m = {k: benchlib.median([r["holdout"][src][k] for r in rs])
             for src, k in (("model", "mae_s"), ("model", "mape"))}
        an = {k: benchlib.median([r["holdout"]["analytic"][k] for r in rs]) for k in ("mae_s", "mape")}
        summary[target] = {"model": m, "analytic": an}
        lines.append(f"| {target} | {m['mae_s']:.2f} s | {m['mape'] * 100:.1f}% | {an['mae_s']:.2f} s | "
                     f"{an['mape'] * 100:.1f}% |")
    table = "\n".join(lines)
    benchlib.write_result("netaware_sim_target", {"results": results, "summary": summary}, table)
    print(table)


if __name__ == "__main__":
    main()
