#!/usr/bin/env python3
"""The simulator's per-job records on a fixed set of workloads, for before/after comparisons.

Writes one records CSV per (workload, cluster, options, policy, seed) into OUT_DIR. Run it with the
binary before a change and after it, then `diff -r` the two folders: a refactoring that must not
change what the simulator measures leaves them byte-identical.

    bench/sim/golden_records.py --chorus build/bin/chorus --out /tmp/golden-after
"""
import argparse
import os
import subprocess
import sys

POLICIES = ["fifo", "fair", "ujf", "cfq", "uwfq"]
MIXES = ["2large2small", "2large2small-b2b", "2power2small", "2power2small-b2b", "4large",
         "4large-b2b", "4supersmall", "4supersmall-b2b"]
CASES = ([(mix, "8x4", []) for mix in MIXES] +
         [(mix, "8x4", ["--partition", "1s"]) for mix in MIXES[:4]] +
         [(mix, "2x16+4x4", []) for mix in MIXES[:2]] +
         [("trace", "32x32", ["--partition", "10s"]), ("trace", "8x32", [])])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chorus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    count = 0
    for gen, cluster, extra in CASES:
        for policy in POLICIES:
            for seed in range(1, args.seeds + 1):
                label = "-".join([gen, cluster.replace("+", "_"), policy, str(seed)] +
                                 [x.strip("-") for x in extra])
                path = os.path.join(args.out, label + ".csv")
                cmd = [args.chorus, "simulate", "--workload", "gen:" + gen, "--cluster", cluster,
                       "--queue", policy, "--seed", str(seed), "--records", path] + extra
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
                count += 1
    print(f"{count} record files in {args.out}")


if __name__ == "__main__":
    main()
