#!/usr/bin/env python3
"""Queue policies live, beside the simulator's prediction of the same workflow (issue 4).

One workflow file, four users in one coordinator: two large users (a sweep of --large tasks of
`sleep 0.4` each, listed first) and two small users (a sweep of 4 x `sleep 0.1` each). For each
policy (fifo, fair, uwfq) it runs `chorus run --queue P --cores 4 --json` for real, --repeats
times, and reads when each user's job ended from the journal events; beside it,
`chorus simulate --workload wf.yaml --cluster 1x4 --compare fifo,fair,uwfq` predicts the same.
Reports the small users' mean response (their job's last task end, from the run's first start),
UWFQ's reduction against FIFO and FAIR, and live / simulated for each policy. Medians over the
repeats. Python 3 standard library only.

    bench/sim/run_live.py [--chorus build/bin/chorus] [--repeats 3] [--large 16]
"""
import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import timed, write_result  # noqa: E402

POLICIES = ["fifo", "fair", "uwfq"]
CORES = 4
SMALL_USERS = ["alice", "dave"]


def workflow(large):
    def sweep(name, user, n, seconds):
        return (f"  - name: {name}\n    user: {user}\n    command: [sleep, \"{seconds}\"]\n"
                f"    estimate: {seconds}s\n    foreach: {{i: \"range(0, {n})\"}}\n")
    return ("name: live-mix\ntasks:\n" + sweep("bob_big", "bob", large, 0.4)
            + sweep("carol_big", "carol", large, 0.4) + sweep("alice_small", "alice", 4, 0.1)
            + sweep("dave_small", "dave", 4, 0.1))


def live_run(chorus, folder, policy):
    """Per job (entry name): seconds from the run's first task start to its last task end."""
    _, proc = timed([chorus, "run", "wf.yaml", "--queue", policy, "--cores", str(CORES), "--json"],
                    cwd=folder)
    started, ended = [], {}
    for line in proc.stdout.splitlines():
        e = json.loads(line)
        if e.get("event") != "task":
            continue
        job = e["task"].split("[")[0]
        if e["state"] == "running":
            started.append(e["time"])
        elif e["state"] == "succeeded":
            ended[job] = max(ended.get(job, 0.0), e["time"])
    t0 = min(started)
    return {job: end - t0 for job, end in ended.items()}


def simulated(chorus, folder):
    """policy -> job -> response seconds, as chorus simulate predicts them."""
    timed([chorus, "simulate", "--workload", "wf.yaml", "--cluster", f"1x{CORES}", "--compare",
           ",".join(POLICIES), "--records", "sim.csv"], cwd=folder)
    out = {}
    with open(os.path.join(folder, "sim.csv")) as f:
        for row in csv.DictReader(f):
            out.setdefault(row["policy"], {})[row["job"]] = float(row["response_s"])
    return out


def small_mean(responses):
    return statistics.mean(responses[f"{u}_small"] for u in SMALL_USERS)


def pct(new, old):
    return 100.0 * (1.0 - new / old) if old > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--large", type=int, default=16, help="tasks per large user")
    args = ap.parse_args()
    chorus = os.path.abspath(args.chorus)

    with tempfile.TemporaryDirectory(prefix="chorus-live-") as folder:
        with open(os.path.join(folder, "wf.yaml"), "w") as f:
            f.write(workflow(args.large))
        sim = simulated(chorus, folder)
        runs = {p: [] for p in POLICIES}
        for r in range(args.repeats):
            for p in POLICIES:  # interleaved, so drift in the machine's load hits all alike
                runs[p].append(live_run(chorus, folder, p))
                print(f"repeat {r + 1} {p}: small mean {small_mean(runs[p][-1]):.2f} s",
                      file=sys.stderr)

    live_small = {p: statistics.median(small_mean(x) for x in runs[p]) for p in POLICIES}
    live_large = {p: statistics.median(statistics.mean(x[j] for j in ("bob_big", "carol_big"))
                                       for x in runs[p]) for p in POLICIES}
    sim_small = {p: small_mean(sim[p]) for p in POLICIES}
    lines = [
        f"`python3 bench/sim/run_live.py --repeats {args.repeats} --large {args.large}`: one "
        f"workflow, 2 large users ({args.large} x 0.4 s each, listed first) and 2 small users "
        f"(4 x 0.1 s each), `chorus run --cores {CORES}` for real (median of {args.repeats}), "
        f"beside `chorus simulate` of the same file on 1x{CORES}.",
        "",
        "| policy | small users' mean response, live | simulated | live / simulated | "
        "large users' mean response, live |",
        "|---|---|---|---|---|",
    ]
    for p in POLICIES:
        lines.append(f"| {p} | {live_small[p]:.2f} s | {sim_small[p]:.2f} s | "
                     f"{live_small[p] / sim_small[p]:.2f} | {live_large[p]:.2f} s |")
    lines += ["", f"UWFQ's small users live: {pct(live_small['uwfq'], live_small['fifo']):.0f}% "
                  f"below FIFO, {pct(live_small['uwfq'], live_small['fair']):.0f}% below FAIR "
                  f"(simulated: {pct(sim_small['uwfq'], sim_small['fifo']):.0f}% and "
                  f"{pct(sim_small['uwfq'], sim_small['fair']):.0f}%)."]
    table = "\n".join(lines)
    write_result("live_fairness", {"large_tasks": args.large, "repeats": args.repeats,
                                   "live_runs": runs, "simulated": sim,
                                   "live_small_mean_s": live_small,
                                   "simulated_small_mean_s": sim_small,
                                   "live_large_mean_s": live_large}, table)
    print(table)


if __name__ == "__main__":
    main()
