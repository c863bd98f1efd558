#!/usr/bin/env python3
"""Agents vs Slurm steps vs a job array (issue 6), on the local Slurm cluster of 4 virtual nodes
(tests/slurm/cluster.sh), same N, same script, repeated; plus coordinator -> agent dispatch
latency and no-op tasks/s through one agent.

    python3 bench/agents/run_agents.py --build build [--tasks 5000] [--repeats 3]

Workloads (N x /bin/true, 1 core each, allocation of 4 nodes x 4 cores):
  agents   - `chorus launch` inside `sbatch -N 4 --exclusive`: one srun step starts the 4 agents,
             tasks go over ZeroMQ (timed inside the job: agent start-up and registration included)
  srun     - `chorus launch --no-agents` in the same kind of job: one srun step per task
  array    - `sbatch --array=1-N --wrap /bin/true`: submit to the last task's end
  spawn    - bench/tools/spawn_baseline N 2: the machine's raw posix_spawn limit (no Slurm), run
             right before and after the agents and averaged
Dispatch (bench/agents/agent_dispatch.cpp): AgentLauncher <-> a real `chorus agent` over
tcp://127.0.0.1 with CURVE: round trip of one task (p50/p99) and tasks/s with a window, with
`--dry-run` (the dispatch path alone) and with /bin/true; and the whole `chorus run --agents 1`
command (journal on) against a --dry-run agent.
"""
import atexit
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import median, timed, write_result  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=5000)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--noop-tasks", type=int, default=100000)
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = os.path.join(build, "bin", "chorus")
spawn = os.path.join(build, "bench", "spawn_baseline")
dispatch = os.path.join(build, "bench", "agent_dispatch")
repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
cluster = os.path.join(repo, "tests", "slurm", "cluster.sh")

subprocess.run([cluster, "start", "4"], check=True, capture_output=True)
# Stopped at the end, also when a figure fails or the script is interrupted.
atexit.register(lambda: subprocess.run([cluster, "stop"], capture_output=True))
os.environ["SLURM_CONF"] = "/tmp/chorus-slurm/etc/slurm.conf" if not os.environ.get(
    "CHORUS_SLURM_DIR") else os.environ["CHORUS_SLURM_DIR"] + "/etc/slurm.conf"

work = tempfile.mkdtemp(prefix="chorus-agents-bench-")
wf = os.path.join(work, "wf.yaml")
with open(wf, "w") as f:
    f.write("name: agents\ntasks:\n  - name: t\n"
            f"    foreach: {{i: \"range(0, {args.tasks})\"}}\n    command: [/bin/true]\n")


def in_job(extra, tag):
    """Runs `chorus launch` in a 4-node job; returns the seconds measured inside the job."""
    times = os.path.join(work, f"times-{tag}")
    state = os.path.join(work, f"state-{tag}")
    script = (f"t0=$(date +%s.%N); {chorus} launch {wf} --state {state} {extra} > {work}/{tag}.log 2>&1;"
              f" rc=$?; t1=$(date +%s.%N); echo $t0 $t1 $rc > {times}")
    timed(["sbatch", "-N", "4", "--exclusive", "--wait", "-t", "30:00", "-o", os.devnull,
           "--wrap", script], cwd=work)
    t0, t1, rc = open(times).read().split()
    if rc != "0":
        raise RuntimeError(f"chorus launch {extra} failed ({rc}):\n" +
                           open(f"{work}/{tag}.log").read()[-2000:])
    shutil.rmtree(state, ignore_errors=True)
    return float(t1) - float(t0)


def job_array():
    t0 = time.perf_counter()
    _, proc = timed(["sbatch", "--parsable", f"--array=1-{args.tasks}", "-o", os.devnull,
                     "--wrap", "/bin/true"], cwd=work)
    job = proc.stdout.strip().split(";")[0]
    while True:
        q = subprocess.run(["squeue", "-h", "-j", job, "-t", "PD,R,CG,CF"], capture_output=True,
                           text=True)
        if q.returncode == 0 and not q.stdout.strip():
            break
        time.sleep(0.2)
    return time.perf_counter() - t0


def spawn_loop():
    _, proc = timed([spawn, str(args.tasks), "2"])
    return json.loads(proc.stdout)["tasks_per_s"]


runs = []
for r in range(args.repeats):
    row = {}
    # The spawn loop right before and right after the agents (seconds apart, where srun steps
    # and the array take minutes): the machine is shared, its load drifts.
    before = spawn_loop()
    row["agents_s"] = in_job("", f"agents-{r}")
    row["spawn_tasks_per_s"] = (before + spawn_loop()) / 2
    # Alternate the slow sides' order.
    for side in (["srun", "array"] if r % 2 == 0 else ["array", "srun"]):
        if side == "srun":
            row["srun_s"] = in_job("--no-agents", f"srun-{r}")
        else:
            row["array_s"] = job_array()
    for k in ("agents", "srun", "array"):
        row[f"{k}_tasks_per_s"] = args.tasks / row[f"{k}_s"]
    row["agents_vs_srun"] = row["agents_tasks_per_s"] / row["srun_tasks_per_s"]
    row["agents_vs_spawn"] = row["agents_tasks_per_s"] / row["spawn_tasks_per_s"]
    runs.append(row)
    print(json.dumps(row), flush=True)

dispatch_runs = []
for r in range(args.repeats):
    _, dry = timed([dispatch, chorus, "--dry-run", "--latency", "2000", "--tasks",
                    str(args.noop_tasks)])
    # 2 in flight, as the spawn loop: the agent's own overhead over a bare spawn loop.
    spawn_before = spawn_loop()
    _, real = timed([dispatch, chorus, "--latency", "1000", "--tasks", str(args.tasks),
                     "--window", "2", "--batch", "2"])
    spawn_after = spawn_loop()
    # The whole command: chorus run --agents 1 (journal, progress) against a --dry-run agent.
    noop_wf = os.path.join(work, "noop.yaml")
    with open(noop_wf, "w") as f:
        f.write("name: noop\ntasks:\n  - name: t\n"
                f"    foreach: {{i: \"range(0, {args.noop_tasks})\"}}\n    command: [/bin/true]\n")
    state = os.path.join(work, f"noop-state-{r}")
    err = open(os.path.join(work, "noop.err"), "w+")
    t0 = time.perf_counter()
    coord = subprocess.Popen([chorus, "run", noop_wf, "--state", state, "--agents", "1"],
                             cwd=work, stdout=subprocess.DEVNULL, stderr=err)
    invite = None
    while invite is None:
        err.seek(0)
        invite = re.search(r"--connect (\S+) --keys (\S+)", err.read())
        time.sleep(0.01)
    agent = subprocess.Popen([chorus, "agent", "--connect", invite[1], "--keys", invite[2],
                              "--node", "solo", "--cores", "1000000", "--dry-run"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if coord.wait() != 0:
        raise RuntimeError("chorus run --agents 1 failed")
    whole = time.perf_counter() - t0
    agent.wait()
    shutil.rmtree(state, ignore_errors=True)
    row = {"dry": json.loads(dry.stdout), "true": json.loads(real.stdout),
           "spawn_tasks_per_s": (spawn_before + spawn_after) / 2,
           "whole_command_noop_tasks_per_s": args.noop_tasks / whole}
    row["true_vs_spawn"] = row["true"]["tasks_per_s"] / row["spawn_tasks_per_s"]
    dispatch_runs.append(row)
    print(json.dumps(row), flush=True)


def med(key, rows=runs):
    return median([r[key] for r in rows])


def dmed(side, key):
    return median([r[side][key] for r in dispatch_runs])


summary = {
    "tasks": args.tasks,
    "repeats": args.repeats,
    "median_tasks_per_s": {k: med(f"{k}_tasks_per_s") for k in ("agents", "srun", "array", "spawn")},
    "agents_vs_srun_median": med("agents_vs_srun"),
    "agents_vs_spawn_median": med("agents_vs_spawn"),
    "dispatch": {
        "dry_run_latency_us_p50": dmed("dry", "latency_us_p50"),
        "dry_run_latency_us_p99": dmed("dry", "latency_us_p99"),
        "dry_run_tasks_per_s": dmed("dry", "tasks_per_s"),
        "true_latency_us_p50": dmed("true", "latency_us_p50"),
        "true_latency_us_p99": dmed("true", "latency_us_p99"),
        "true_tasks_per_s": dmed("true", "tasks_per_s"),
        "whole_command_noop_tasks_per_s": med("whole_command_noop_tasks_per_s", dispatch_runs),
        "true_vs_spawn": med("true_vs_spawn", dispatch_runs),
    },
    "runs": runs,
    "dispatch_runs": dispatch_runs,
    "build": build,
}
m = summary["median_tasks_per_s"]
d = summary["dispatch"]
N = f"{args.tasks:,}"
table = (
    f"| N = {N} x `/bin/true`, 4 nodes x 4 cores | tasks/s (median of {args.repeats}) | vs srun steps | vs spawn loop | target |\n"
    "|---|---|---|---|---|\n"
    f"| `chorus launch`, agents (one srun step starts them; start-up included) | {m['agents']:,.0f} | {summary['agents_vs_srun_median']:.1f}x | {summary['agents_vs_spawn_median']:.2f} | >= 20x, >= 0.70 |\n"
    f"| `chorus launch --no-agents`, one srun step per task | {m['srun']:,.0f} | 1.0x | {m['srun'] / m['spawn']:.2f} | - |\n"
    f"| `sbatch --array=1-{args.tasks}` (submit to last end) | {m['array']:,.0f} | {m['array'] / m['srun']:.1f}x | {m['array'] / m['spawn']:.2f} | - |\n"
    f"| spawn loop (posix_spawn, 2 in flight, no Slurm) | {m['spawn']:,.0f} | - | 1.00 | - |\n"
    "\n"
    "| coordinator -> one agent, tcp://127.0.0.1, CURVE | p50 | p99 | tasks/s (median) | target |\n"
    "|---|---|---|---|---|\n"
    f"| round trip, `--dry-run` agent (dispatch path alone) | {d['dry_run_latency_us_p50']:.0f} us | {d['dry_run_latency_us_p99']:.0f} us | {d['dry_run_tasks_per_s']:,.0f} ({args.noop_tasks:,} tasks, AgentLauncher) | 50,000/s |\n"
    f"| round trip, `/bin/true`; rate with 2 in flight | {d['true_latency_us_p50']:.0f} us | {d['true_latency_us_p99']:.0f} us | {d['true_tasks_per_s']:,.0f} ({N} tasks; {d['true_vs_spawn']:.2f} of the spawn loop beside it) | - |\n"
    f"| whole `chorus run --agents 1` (journal on), `--dry-run` agent | - | - | {d['whole_command_noop_tasks_per_s']:,.0f} ({args.noop_tasks:,} tasks) | 50,000/s |"
)
write_result("agents", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
