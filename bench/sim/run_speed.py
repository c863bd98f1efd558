#!/usr/bin/env python3
"""How fast `chorus simulate` is (issue 4: "a 100,000-job workload in seconds").

Times, median of --repeats runs each (the whole command: parse, simulate, metrics):
- the trace generator at 100,000 jobs (`gen:trace --scale 125` on 32x32), under uwfq alone and
  under all five policies (--compare);
- one user's N one-task jobs all queued at once, in two orders: each longer than the last (every
  job joins the back of the user's chain) and each shorter than the last (every job overtakes all
  the user's earlier ones, moving their deadlines: the order that was quadratic before the chain
  kept prefix sums). The ratio of the two, and how time grows with N, show the cost per job.
Python 3 standard library only.

    bench/sim/run_speed.py [--chorus build/bin/chorus] [--repeats 3]
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

SIZES = [10_000, 40_000, 100_000]


def one_user(path, n, shrinking):
    jobs = []
    for k in range(n):
        runtime = 1000.0 - k * (999.0 / n) if shrinking else 1.0 + k * (999.0 / n)
        jobs.append({"id": f"j{k}", "user": "alice", "arrival": 0,
                     "tasks": [{"runtime": round(runtime, 6)}]})
    with open(path, "w") as f:
        json.dump({"name": "one-user", "jobs": jobs}, f)


def seconds(chorus, args, repeats):
    return statistics.median(timed([chorus, "simulate"] + args)[0] for _ in range(repeats))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    chorus = os.path.abspath(args.chorus)

    trace = ["--workload", "gen:trace", "--scale", "125", "--cluster", "32x32"]
    trace_uwfq = seconds(chorus, trace + ["--queue", "uwfq"], args.repeats)
    trace_all = seconds(chorus, trace + ["--compare", "fifo,fair,ujf,cfq,uwfq"], args.repeats)
    orders = {}
    with tempfile.TemporaryDirectory(prefix="chorus-speed-") as folder:
        for n in SIZES:
            for shrinking in (False, True):
                path = os.path.join(folder, f"{n}-{shrinking}.json")
                one_user(path, n, shrinking)
                orders[(n, shrinking)] = seconds(
                    chorus, ["--workload", path, "--cluster", "1x4", "--queue", "uwfq"],
                    args.repeats)
                print(f"{n} jobs, {'shortest last' if shrinking else 'longest last'}: "
                      f"{orders[(n, shrinking)]:.2f} s", file=sys.stderr)

    lines = [
        f"`python3 bench/sim/run_speed.py --repeats {args.repeats}` (whole `chorus simulate` "
        f"command, median of {args.repeats})",
        "",
        "| workload | policies | seconds |",
        "|---|---|---|",
        f"| trace, 100,000 jobs, 32x32 | uwfq | {trace_uwfq:.2f} |",
        f"| trace, 100,000 jobs, 32x32 | fifo, fair, ujf, cfq, uwfq | {trace_all:.2f} |",
        "",
        "| one user's N jobs at once, 1x4, uwfq | longest last (s) | shortest last: each "
        "overtakes all (s) | ratio |",
        "|---|---|---|---|",
    ]
    for n in SIZES:
        a, b = orders[(n, False)], orders[(n, True)]
        lines.append(f"| {n:,} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    table = "\n".join(lines)
    write_result("sim_speed", {"repeats": args.repeats, "trace_100k_uwfq_s": trace_uwfq,
                               "trace_100k_five_policies_s": trace_all,
                               "one_user": [{"jobs": n, "longest_last_s": orders[(n, False)],
                                             "shortest_last_s": orders[(n, True)]}
                                            for n in SIZES]}, table)
    print(table)


if __name__ == "__main__":
    main()
