#!/usr/bin/env python3
"""The quorum policies' targets in the round simulator (issue 15).

For every scenario S0-S6: every static b from 0 to n-1, wait-all, adasync, dbw and dbw+ (those
registered; a missing one is skipped with a line), and any --extra entries (dbw+'s ablations,
e.g. --extra dbw+:grace=0), all on the same seeds (same delays, same batches), through
`chorus simulate-quorum --json`. Medians over the seeds of the time to the target loss; a seed
that does not reach it counts as infinitely slow. Then the table the targets read: the best
static b in hindsight per scenario, dbw+ / best static, wait-all / dbw+ (S2), adasync.

Both cores are used: each (scenario, half of the seeds) is one process, --jobs of them at once.
Results: bench/results/dbw/targets.json (every seed's time) and targets.md (the table), and
the <!-- results:dbw_targets --> section of bench/README.md. Python 3 standard library only.

    bench/dbw/run_targets.py [--chorus build/bin/chorus] [--seeds 10] [--jobs 2]
        [--scenarios S0,S1,...] [--extra dbw+:grace=0 ...] [--mode interrupt|timed]
        [--workload logistic|digits] [-- extra simulate-quorum flags]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402

SCENARIOS = ["S0", "S1", "S2", "S3", "S4", "S5", "S6"]
ADAPTIVE = ["adasync", "dbw", "dbw+"]
INF = float("inf")


def median(values):
    v = sorted(values)
    if not v:
        return float("nan")
    m = len(v) // 2
    if len(v) % 2:
        return v[m]
    if math.isinf(v[m]):
        return INF
    return 0.5 * (v[m - 1] + v[m])


def registered(chorus, name):
    """Whether `name` is a registered quorum policy: a one-round run on a tiny problem."""
    proc = subprocess.run(
        [chorus, "simulate-quorum", "--dim", "4", "--samples", "20", "--n", "2",
         "--max-iterations", "1", "--compare", name, "--json"],
        capture_output=True, text=True)
    if proc.returncode == 0:
        return True
    if "unknown quorum policy" in proc.stderr:
        return False
    raise RuntimeError(f"checking {name}: {proc.stderr.strip()}")


def run_chunk(chorus, scenario, compare, first_seed, seeds, common):
    cmd = [chorus, "simulate-quorum", "--scenario", scenario, "--compare", ",".join(compare),
           "--seed", str(first_seed), "--seeds", str(seeds), "--json"] + common
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t0, json.loads(proc.stdout)


def fmt_time(t):
    return "not reached" if math.isinf(t) else f"{t:.2f}s"


def fmt_ratio(a, b):
    """a / b as a speed ratio ("2.10x"), "-" when undefined."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) and math.isinf(b) or b == 0:
        return "-"
    if math.isinf(b):
        return "inf"
    if math.isinf(a):
        return "inf" if a > 0 else "-"
    return f"{a / b:.2f}x"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="processes at once")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--workload", default="logistic")
    ap.add_argument("--mode", default="interrupt")
    ap.add_argument("--extra", action="append", default=[],
                    help="a further --compare entry, e.g. dbw+:grace=0 (repeatable)")
    ap.add_argument("--name", default="targets", help="results/dbw/<name>.json and .md")
    ap.add_argument("rest", nargs="*", help="more simulate-quorum flags (after --)")
    a = ap.parse_args()

    notes = []
    compare = [f"static:b=0..{a.n - 1}", "wait-all"]
    present = []
    for name in ADAPTIVE:
        if registered(a.chorus, name):
            compare.append(name)
            present.append(name)
        else:
            notes.append(f"{name}: not registered in this build, skipped")
            print(f"skipping {name}: not registered", file=sys.stderr)
    extras = []
    for e in a.extra:
        base = e.split(":")[0]
        if base in ADAPTIVE and base not in present:
            notes.append(f"{e}: {base} not registered, skipped")
            continue
        compare.append(e)
        extras.append(e)

    common = ["--n", str(a.n), "--workload", a.workload, "--mode", a.mode] + a.rest
    halves = []
    per = max(1, math.ceil(a.seeds / 2))
    for s in a.scenarios.split(","):
        for start in range(0, a.seeds, per):
            halves.append((s, a.first_seed + start, min(per, a.seeds - start)))

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [(s, pool.submit(run_chunk, a.chorus, s, compare, first, count, common))
                   for s, first, count in halves]
        chunks = [(s, f.result()) for s, f in futures]
    wall = time.perf_counter() - t0

    # Per scenario, per policy label: the per-seed times in seed order.
    results = {}
    meta = {}
    for s, (secs, doc) in chunks:
        meta.setdefault(s, {k: doc[k] for k in ("workload", "scenario", "mode", "n", "batch",
                                                "learning_rate", "switch_at", "target_loss",
                                                "optimum_loss", "initial_loss", "max_iterations")})
        table = results.setdefault(s, {})
        for p in doc["policies"]:
            row = table.setdefault(p["policy"], {"times_s": [], "mean_k": [], "ns_per_call": []})
            row["times_s"] += [INF if t is None else t for t in p["times_s"]]
            row["mean_k"].append(p["median_mean_k"])
            row["ns_per_call"].append(p["policy_ns_per_call"])

    summary = {}
    for s in a.scenarios.split(","):
        rows = results[s]
        med = {label: median(r["times_s"]) for label, r in rows.items()}
        statics = {label: t for label, t in med.items() if label.startswith("static:b=")}
        best_label = min(statics, key=lambda k: (statics[k], int(k.split("=")[1])))
        summary[s] = {"best_static": best_label, "best_static_s": statics[best_label],
                      "medians_s": med}

    def speed(s, label, base_label=None, base_time=None):
        m = summary[s]["medians_s"]
        if label not in m:
            return float("nan")
        base = base_time if base_time is not None else m.get(base_label, float("nan"))
        t = m[label]
        if math.isinf(t) and math.isinf(base):
            return float("nan")
        if math.isinf(t):
            return 0.0
        return base / t

    lines = []
    first = meta[a.scenarios.split(",")[0]]
    lines.append(f"Time to the target loss, medians of {a.seeds} seeds ({first['workload']}, "
                 f"n {a.n}, batch {first['batch']}, lr {first['learning_rate']}, {a.mode} mode; "
                 "X / Y is Y's time over X's, a speed ratio: above 1, X is faster)")
    lines.append("")
    cols = ["scenario", "best static b", "its time", "wait-all"] + present + extras + \
           (["dbw+ / best static"] if "dbw+" in present else []) + \
           (["dbw+ / wait-all"] if "dbw+" in present else []) + \
           (["adasync / best static"] if "adasync" in present else []) + \
           [f"{e} / best static" for e in extras]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for s in a.scenarios.split(","):
        sm = summary[s]
        m = sm["medians_s"]
        best = sm["best_static_s"]
        cells = [meta[s]["scenario"], sm["best_static"].split("=")[1], fmt_time(best),
                 fmt_time(m["wait-all"])]
        cells += [fmt_time(m[p]) for p in present + extras]
        if "dbw+" in present:
            cells.append(fmt_ratio(best, m["dbw+"]))
            cells.append(fmt_ratio(m["wait-all"], m["dbw+"]))
        if "adasync" in present:
            cells.append(fmt_ratio(best, m["adasync"]))
        cells += [fmt_ratio(best, m[e]) for e in extras]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    # The static sweep itself, so the best b is visible with its neighbours.
    lines.append("Every static b (median time to target; `-` not reached by half the seeds):")
    lines.append("")
    lines.append("| scenario | " + " | ".join(f"b={b}" for b in range(a.n)) + " |")
    lines.append("|" + "---|" * (a.n + 1))
    for s in a.scenarios.split(","):
        m = summary[s]["medians_s"]
        lines.append(f"| {s} | " + " | ".join(
            "-" if math.isinf(m[f"static:b={b}"]) else f"{m[f'static:b={b}']:.2f}"
            for b in range(a.n)) + " |")
    lines.append("")
    checks = []
    if "dbw+" in present:
        for s in a.scenarios.split(","):
            r = speed(s, "dbw+", base_time=summary[s]["best_static_s"])
            need = 1.5 if s in ("S5", "S6") else (0.95 if s in ("S0", "S1", "S2", "S3", "S4") else 0.9)
            checks.append((f"dbw+ >= {need}x best static b on {s}", r, r >= need))
        if "S2" in summary:
            r = speed("S2", "dbw+", "wait-all")
            checks.append(("dbw+ >= 2x wait-all on S2", r, r >= 2))
        lines.append("Targets (measured here):")
        lines.append("")
        for what, r, ok in checks:
            lines.append(f"- {what}: {r:.2f}x {'met' if ok else 'NOT met'}")
        lines.append("")
    for n in notes:
        lines.append(f"- {n}")
    lines.append(f"- wall time {wall:.0f} s with {a.jobs} processes; S5/S6 switch at round "
                 f"{first['switch_at']}; target loss {first['target_loss']:.5f}")
    table_md = "\n".join(lines)
    print(table_md)

    data = {"args": vars(a), "compare": compare, "wall_s": wall, "meta": meta,
            "results": {s: {label: {"times_s": [None if math.isinf(t) else t for t in r["times_s"]],
                                    "median_s": None if math.isinf(median(r["times_s"])) else median(r["times_s"]),
                                    "mean_k": r["mean_k"], "ns_per_call": r["ns_per_call"]}
                            for label, r in rows.items()} for s, rows in results.items()},
            "best_static": {s: summary[s]["best_static"] for s in summary},
            "checks": [{"what": w, "ratio": r, "met": ok} for w, r, ok in checks],
            "notes": notes}
    benchlib.write_result(os.path.join("dbw", a.name), data, table_md,
                          block="dbw_targets" if a.name == "targets" else f"dbw_{a.name}")


if __name__ == "__main__":
    main()
