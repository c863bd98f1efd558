#!/usr/bin/env python3
"""The probe budget (docs/telemetry.md): the share of a shaped link's capacity the agents' link
probes use, and how close their measured bandwidth is to the shaper's rate.

Runs the doctest case Runtime.Netprobe.ProbesStayWithinOnePercentOfAShapedLink (two network
namespaces made by the test, a veth pair, TBF 20 Mbit/s burst 32 KB each way, a data server in
one namespace and a LinkProber with the default budget in the other, 30 s; the bytes are the
data server's own counters) N times and reports medians. Baseline: the budget itself, 1%.

    bench/netprobe/probe_budget.py [--build build] [--repeats 5]

Needs root (namespaces); prints a skip line otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

LINE = re.compile(
    r"probe budget over ([\d.]+) s at 20 Mbit/s: down (\d+) bytes in (\d+) probes = ([\d.]+)% "
    r"of the link, up (\d+) bytes in (\d+) probes = ([\d.]+)%; measured down ([\d.]+) Mbit/s, "
    r"up ([\d.]+) Mbit/s, rtt ([\d.]+) ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    exe = os.path.join(args.build, "tests", "test_runtime")
    runs = []
    for i in range(args.repeats):
        proc = subprocess.run(
            [exe, "-tc=Runtime.Netprobe.ProbesStayWithinOnePercentOfAShapedLink"],
            capture_output=True, text=True)
        m = LINE.search(proc.stdout)
        if not m:
            if "skipped" in proc.stdout + proc.stderr:
                print("skipped: network namespaces cannot be made here (needs root and iproute2)")
                return 0
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            return 1
        g = m.groups()
        run = {"seconds": float(g[0]), "down_bytes": int(g[1]), "down_probes": int(g[2]),
               "down_pct": float(g[3]), "up_bytes": int(g[4]), "up_probes": int(g[5]),
               "up_pct": float(g[6]), "down_mbit": float(g[7]), "up_mbit": float(g[8]),
               "rtt_ms": float(g[9]), "test_passed": proc.returncode == 0}
        runs.append(run)
        print(f"run {i + 1}: down {run['down_pct']:.3f}% up {run['up_pct']:.3f}% of the link; "
              f"measured {run['down_mbit']:.2f} / {run['up_mbit']:.2f} Mbit/s")
    med = {k: benchlib.median([r[k] for r in runs])
           for k in ("down_pct", "up_pct", "down_mbit", "up_mbit", "rtt_ms")}
    table = "\n".join([
        "| figure (20 Mbit/s TBF each way, 30 s, median of %d) | value | budget / reference |"
        % len(runs),
        "|---|---|---|",
        f"| probe bytes down (GET), share of the link | {med['down_pct']:.3f}% | 1% |",
        f"| probe bytes up (PUT), share of the link | {med['up_pct']:.3f}% | 1% |",
        f"| measured down bandwidth | {med['down_mbit']:.2f} Mbit/s | TBF 20 Mbit/s "
        f"({100 * (med['down_mbit'] / 20 - 1):+.1f}%) |",
        f"| measured up bandwidth | {med['up_mbit']:.2f} Mbit/s | TBF 20 Mbit/s "
        f"({100 * (med['up_mbit'] / 20 - 1):+.1f}%) |",
        f"| runs whose test passed | {sum(r['test_passed'] for r in runs)} of {len(runs)} | all |",
    ])
    benchlib.write_result("probe_budget", {"runs": runs, "median": med}, table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
