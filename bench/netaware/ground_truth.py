#!/usr/bin/env python3
"""Ground truth for network-aware placement on the real test bed (issue 14).

For every background schedule (seed) and every stationary phase of it (the schedule held at one
period: each node's background flow at a constant rate), every evaluation job runs on every node,
in a seeded random order, `--repeats` times; per node the median time; the optimal node is the
argmin of the medians, the tolerant set every node within `--tolerance` (5%) of it. Data sets
are split by whole schedules: `--seeds` names the schedules of this set (train and evaluation
seeds never share a schedule; see README.md).

    sudo bench/netaware/ground_truth.py --build build --seeds 101,102 --phases 2 --jobs 8

Writes bench/results/<--name>.json (every run) and .md (the summary), and refreshes the
README block of the same name. A static reference is scored on the same rows: "fattest link"
(always the node with the highest nominal rate) — what a placement that ignores background and
CPU quotas gets — and an oracle (noise_ceiling): the argmin of half of each node's repeats scored
on the other half, what a perfect estimator could get against a ground truth this noisy.
`--rescore RESULT.json` recomputes the summary of a result (keeping its machine record), running
nothing.
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import bedlib  # noqa: E402


def score(picks, rows):
    """Top-1 tolerant and strict (fractions) and regret (chosen/best - 1: mean, p90) of one
    pick per row (None = no pick, counted wrong with regret = worst node's)."""
    tolerant = strict = 0
    regrets = []
    for pick, row in zip(picks, rows):
        med = row["median_s"]
        best = med[row["optimal"]]
        chosen = med.get(pick, max(med.values()))
        strict += pick == row["optimal"]
        tolerant += pick in row["tolerant"]
        regrets.append(chosen / best - 1)
    n = max(1, len(rows))
    return {"top1_tolerant": tolerant / n, "top1_strict": strict / n,
            "regret_mean": sum(regrets) / n, "regret_p90": bedlib.percentile(regrets, 0.9),
            "rows": len(rows)}


def measure(bed, seeds, phases, jobs_per_phase, repeats, tolerance, log):
    rows = []
    for seed in seeds:
        for phase in range(phases):
            bed.background(seed, hold=phase)
            bg = bed.background_rates(phase)
            jobs = bedlib.make_jobs(seed * 100 + phase, jobs_per_phase)
            for job in jobs:
                order = [(n["name"], r) for n in bed.nodes for r in range(repeats)]
                random.Random("%d/%d/%s" % (seed, phase, job["id"])).shuffle(order)
                times = {n["name"]: [] for n in bed.nodes}
                phases_s = {n["name"]: [] for n in bed.nodes}
                by_name = {n["name"]: n for n in bed.nodes}
                for name, _ in order:
                    out = bed.run_job(by_name[name], job)
                    times[name].append(out["total_s"])
                    phases_s[name].append([out["fetch_s"], out["compute_s"], out["push_s"]])
                med = {n: bedlib.median(t) for n, t in times.items()}
                best = min(med, key=med.get)
                tol = sorted(n for n, t in med.items() if t <= med[best] * (1 + tolerance))
                second = sorted(med.values())[1] if len(med) > 1 else med[best]
                row = {"seed": seed, "phase": phase, "background_mbit": bg, "job": job,
                       "order": [o[0] for o in order], "times_s": times, "phases_s": phases_s,
                       "median_s": med, "optimal": best, "tolerant": tol,
                       "margin": second / med[best] - 1}
                rows.append(row)
                log("seed %d phase %d %s: %s best %s (%.2fs, next +%.0f%%)" % (
                    seed, phase, job["id"], " ".join("%s=%.2f" % kv for kv in sorted(med.items())),
                    best, med[best], 100 * row["margin"]))
    return rows


def summary_table(rows, nodes, static):
    counts = {n["name"]: sum(r["optimal"] == n["name"] for r in rows) for n in nodes}
    tol_size = sum(len(r["tolerant"]) for r in rows) / max(1, len(rows))
    lines = [
        "| rows | seeds | optimal node counts | mean tolerant-set size | median margin to 2nd |",
        "|---|---|---|---|---|",
        "| %d | %s | %s | %.2f | %.0f%% |" % (
            len(rows), ",".join(str(s) for s in sorted({r["seed"] for r in rows})),
            " ".join("%s:%d" % kv for kv in counts.items()), tol_size,
            100 * bedlib.median([r["margin"] for r in rows]) if rows else float("nan")),
        "",
        "| reference pick | top-1 tolerant | top-1 strict | regret mean | regret p90 |",
        "|---|---|---|---|---|",
    ]
    for name, s in static.items():
        lines.append("| %s | %.0f%% | %.0f%% | %.1f%% | %.1f%% |" % (
            name, 100 * s["top1_tolerant"], 100 * s["top1_strict"], 100 * s["regret_mean"],
            100 * s["regret_p90"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seeds", default="101,102")
    ap.add_argument("--phases", type=int, default=2, help="stationary phases per schedule")
    ap.add_argument("--jobs", type=int, default=8, help="evaluation jobs per phase")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--prefix", default="gt%d" % (os.getpid() % 100000))
    ap.add_argument("--name", default="netaware_ground_truth")
    ap.add_argument("--rescore", help="a result file: recompute its summary, run nothing")
    a = ap.parse_args()
    if a.rescore:
        old = json.load(open(a.rescore))
        cfg = old["config"]
        desc = {"stores": cfg["stores"], "background": {"levels": cfg["levels"]}}
        a.repeats, a.tolerance, a.phases, a.jobs = (cfg["repeats"], cfg["tolerance"],
                                                     cfg["phases"], cfg["jobs_per_phase"])
        write(a, old["rows"], cfg["nodes"], desc, cfg["seeds"], old["seconds"], old.get("machine"))
        return
    seeds = [int(s) for s in a.seeds.split(",")]
    t0 = time.time()
    with bedlib.Bed(a.build, a.prefix) as bed:
        rows = measure(bed, seeds, a.phases, a.jobs, a.repeats, a.tolerance,
                       lambda m: print(m, file=sys.stderr, flush=True))
        nodes = bed.nodes
        desc = bed.desc
    write(a, rows, nodes, desc, seeds, time.time() - t0)


def references(rows, nodes, tolerance):
    """Static picks scored on the rows: always node X (every X: the best of them is what a
    fixed ranking by nominal rates and quotas could at most get), and a uniform random pick."""
    static = {}
    for n in nodes:
        label = "always %s (%g Mbit%s)" % (n["name"], n["rate_mbit"],
                                           ", %g core" % n["cpu_quota_cores"]
                                           if n.get("cpu_quota_cores") else "")
        static[label] = score([n["name"]] * len(rows), rows)
    rnd = random.Random(0)
    static["uniform random (expected)"] = {
        k: sum(score([rnd.choice(nodes)["name"] for _ in rows], rows)[k] for _ in range(50)) / 50
        for k in ("top1_tolerant", "top1_strict", "regret_mean", "regret_p90")}
    ceiling = noise_ceiling(rows, tolerance)
    if ceiling:
        static["oracle: argmin of half the repeats, scored on the other half"] = ceiling
    return static


def noise_ceiling(rows, tol):
    """What the bed's own noise leaves for a perfect estimator: each node's repeats split in
    two halves (alternate runs), the argmin of one half's medians scored against the other
    half's (tolerant, strict, regret), both ways, averaged. A policy is scored against the
    medians of all repeats, which are less noisy than one half: with 2 repeats this ceiling is
    pessimistic (one run against one run); with 4 it compares medians of 2, close to how a
    policy's pick is scored. None when a node has fewer than 2 runs."""
    sums = {"top1_tolerant": 0.0, "top1_strict": 0.0}
    regrets = []
    count = 0
    for row in rows:
        t = row["times_s"]
        if min(len(v) for v in t.values()) < 2:
            return None
        halves = [{n: bedlib.median(v[h::2]) for n, v in t.items()} for h in (0, 1)]
        for a, b in ((0, 1), (1, 0)):
            pick = min(halves[a], key=halves[a].get)
            best = min(halves[b].values())
            sums["top1_tolerant"] += halves[b][pick] <= best * (1 + tol)
            sums["top1_strict"] += halves[b][pick] == best
            regrets.append(halves[b][pick] / best - 1)
            count += 1
    out = {k: v / count for k, v in sums.items()}
    out["regret_mean"] = sum(regrets) / count
    out["regret_p90"] = bedlib.percentile(regrets, 0.9)
    out["rows"] = len(rows)
    return out


def write(a, rows, nodes, desc, seeds, seconds, measured_on=None):
    static = references(rows, nodes, a.tolerance)
    table = summary_table(rows, nodes, static)
    data = {"config": {"seeds": seeds, "phases": a.phases, "jobs_per_phase": a.jobs,
                       "repeats": a.repeats, "tolerance": a.tolerance,
                       "nodes": [{k: n[k] for k in ("name", "rate_mbit", "cpu_quota_cores")}
                                 for n in nodes],
                       "stores": [{k: s[k] for k in ("name", "delay_ms")} for s in desc["stores"]],
                       "levels": desc["background"]["levels"]},
            "seconds": seconds, "rows": rows, "reference": static}
    benchlib.write_result(a.name, data, table, measured_on=measured_on)
    print(table)
    print("(%.0f s)" % seconds)


if __name__ == "__main__":
    main()
