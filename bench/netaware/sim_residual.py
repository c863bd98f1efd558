#!/usr/bin/env python3
"""Does a completion-time model help network-aware placement, by what it fits and how many rows?

In the simulator's modelled network (`chorus simulate --network gen:... --data ...`): training
rows from `--train` background schedules under random placement (every node explored; `--rows-out`),
cut to the first --rows rows per schedule (the bed's training set is ~200 rows from 12 phases), a
model fitted on them per target (`chorus model train --rows ... --target T`: log_seconds, the
whole time, and log_ratio, the analytic estimate's error), then network-aware placement on
`--eval` other schedules with no model (the analytic estimate) and with each model: small and
large jobs' mean response, medians over the eval schedules, and each one's ratio to the analytic
estimate's on the same schedule (below 1: the model helps).

    bench/netaware/sim_residual.py [--build build] [--rows 30,300] [--train 8] [--eval 10]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

TARGETS = ["log_seconds", "log_ratio"]


def simulate(chorus, a, seed, placement, extra=()):
    cmd = [chorus, "simulate", "--workload", a.workload, "--scale", a.scale, "--cluster", a.cluster,
           "--network", "gen:sources=2,seed=%d" % seed, "--data", "in=1:200,out=0:20,seed=%d" % seed,
           "--placement", placement] + list(extra)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = [l for l in out.strip().splitlines() if l.startswith("uwfq")][-1]
    nums = re.findall(r"([0-9.]+)s?\s", line + " ")
    return float(nums[0]), float(nums[2])  # small mean, large mean


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rows", default="30,300", help="training rows kept per schedule, comma-separated")
    ap.add_argument("--train", type=int, default=8, help="training schedules (seeds 1001..)")
    ap.add_argument("--eval", type=int, default=10, help="evaluation schedules (seeds 1..)")
    ap.add_argument("--workload", default="gen:2large2small")
    ap.add_argument("--scale", default="0.05")
    ap.add_argument("--cluster", default="64x4")
    ap.add_argument("--name", default="netaware_sim_residual")
    a = ap.parse_args()
    chorus = os.path.join(a.build, "bin", "chorus")
    work = tempfile.mkdtemp(prefix="chorus-sim-residual-")
    # Training rows: every schedule's rows under random placement (one run per schedule).
    full = []
    for s in range(1001, 1001 + a.train):
        path = os.path.join(work, "rows%d.csv" % s)
        simulate(chorus, a, s, "random", ["--rows-out", path])
        with open(path) as f:
            full.append(f.read().splitlines())
    models = {}
    fits = {}
    for keep in [int(x) for x in a.rows.split(",")]:
        files = []
        for i, lines in enumerate(full):
            path = os.path.join(work, "keep%d-%d.csv" % (keep, i))
            with open(path, "w") as f:
                f.write("\n".join(lines[:1 + keep]) + "\n")
            files.append(path)
        for t in TARGETS:
            out = os.path.join(work, "m-%d-%s.json" % (keep, t))
            cmd = [chorus, "model", "train", "-o", out, "--target", t, "--min-rows", "10"]
            for p in files:
                cmd += ["--rows", p]
            proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
            models[(keep, t)] = out
            fits["%d rows/schedule, %s" % (keep, t)] = proc.stdout.strip().splitlines()
    rows = []
    for s in range(1, 1 + a.eval):
        base = simulate(chorus, a, s, "network-aware")
        row = {"schedule": s, "analytic": base}
        for (keep, t), path in models.items():
            row["%d/%s" % (keep, t)] = simulate(chorus, a, s, "network-aware", ["--option", "model=" + path])
        row["kube-default"] = simulate(chorus, a, s, "kube-default")
        rows.append(row)
    labels = ["analytic"] + ["%d/%s" % k for k in models] + ["kube-default"]
    lines = ["`%s` x%s on %s, every task moving 1-200 MB in and 0-20 MB out; models trained on %d "
             "schedules under random placement (seeds 1001-%d, the first N rows of each), evaluated "
             "on %d others (seeds 1-%d); medians over them." % (
                 a.workload, a.scale, a.cluster, a.train, 1000 + a.train, a.eval, a.eval), "",
             "| network-aware with | small mean | large mean | small / analytic | large / analytic |",
             "|---|---|---|---|---|"]
    summary = {}
    for lab in labels:
        sm = benchlib.median([r[lab][0] for r in rows])
        lg = benchlib.median([r[lab][1] for r in rows])
        rs = benchlib.median([r[lab][0] / r["analytic"][0] for r in rows])
        rl = benchlib.median([r[lab][1] / r["analytic"][1] for r in rows])
        summary[lab] = {"small_mean_s": sm, "large_mean_s": lg, "small_vs_analytic": rs,
                        "large_vs_analytic": rl}
        if lab == "analytic":
            name = "no model (analytic estimate)"
        elif lab == "kube-default":
            name = "(kube-default placement)"
        else:
            name = "model: %s rows/schedule, target %s" % tuple(lab.split("/"))
        lines.append("| %s | %.1f s | %.1f s | %.3f | %.3f |" % (name, sm, lg, rs, rl))
    table = "\n".join(lines)
    benchlib.write_result(a.name, {"rows": rows, "summary": summary, "fits": fits}, table)
    print(table)
    for k, v in fits.items():
        print(k + ": " + " | ".join(x for x in v if "holdout" in x))


if __name__ == "__main__":
    main()
