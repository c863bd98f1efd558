#!/usr/bin/env python3
"""Earliest finish (network-aware's `wait`) in the simulator's mixed workload, per queue policy
(issue 14): `chorus simulate --workload gen:2large2small --scale 0.05 --cluster 64x4 --network
gen:sources=2,seed=N --data in=1:200,out=0:20,seed=N --placement network-aware --option wait=W
--queue Q` for N in the seeds, W in off and 0; medians over the seeds of the small and the large
jobs' mean response. `--strict-chorus PATH` adds a column from another build's chorus with
`wait=0` (build 31fc90e: the queues' strict order, before they passed over a waiting task).

    python3 bench/netaware/sim_wait.py [--chorus build/bin/chorus] [--seeds 5]
        [--queues uwfq,fifo,fair] [--strict-chorus PATH] [--name netaware_sim_wait]

Writes bench/results/NAME.{json,md}.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402


def small_large(chorus, queue, seed, wait):
    """The small and the large jobs' mean response (s) of one simulation."""
    out = subprocess.run([chorus, "simulate", "--workload", "gen:2large2small", "--scale", "0.05",
                          "--cluster", "64x4", "--network", "gen:sources=2,seed=%d" % seed,
                          "--data", "in=1:200,out=0:20,seed=%d" % seed, "--placement",
                          "network-aware", "--option", "wait=%s" % wait, "--queue", queue],
                         check=True, capture_output=True, text=True).stdout
    row = [line for line in out.splitlines() if line.startswith(queue + " ")][-1].split()
    return float(row[1].rstrip("s")), float(row[3].rstrip("s"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chorus", default=os.path.join(os.path.dirname(benchlib.BENCH_DIR), "build",
                                                     "bin", "chorus"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--queues", default="uwfq,fifo,fair")
    ap.add_argument("--strict-chorus", default="")
    ap.add_argument("--name", default="netaware_sim_wait")
    a = ap.parse_args()
    variants = [("wait: off", a.chorus, "off"), ("wait: 0, passed over", a.chorus, "0")]
    if a.strict_chorus:
        variants.insert(1, ("wait: 0, strict order", a.strict_chorus, "0"))
    results = {}
    for queue in a.queues.split(","):
        for label, chorus, wait in variants:
            runs = [small_large(chorus, queue, s, wait) for s in range(1, a.seeds + 1)]
            results.setdefault(queue, {})[label] = {
                "small_s": statistics.median(r[0] for r in runs),
                "large_s": statistics.median(r[1] for r in runs), "runs": runs}
    labels = [v[0] for v in variants]
    lines = ["Small / large jobs' mean response, medians of seeds 1-%d." % a.seeds, "",
             "| queue | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    for queue, row in results.items():
        lines.append("| %s | %s |" % (queue, " | ".join(
            "%.1f s / %.1f s" % (row[l]["small_s"], row[l]["large_s"]) for l in labels)))
    text = "\n".join(lines) + "\n"
    print(text)
    benchlib.write_result(a.name, {"config": vars(a), "results": results}, text)


if __name__ == "__main__":
    main()
