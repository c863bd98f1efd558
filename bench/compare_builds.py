#!/usr/bin/env python3
"""Two builds side by side on the figures a refactoring must not move (issue 13): launch rate vs
the spawn loop, function tasks/s, agents tasks/s, uwfq decisions/s at 100k queued. Each figure is
measured for both builds alternately in the same run (the order swaps every repeat, so drift on a
shared machine hits both alike); the table gives medians and the ratio after/before.

    bench/compare_builds.py --before /path/to/build-before --after build [--repeats 5]
        [--figures launch,function,agents,uwfq] [--name compare_builds]

Writes bench/results/compare_builds.json and .md and the README's compare_builds section. The
agents figure is `chorus run --agents 1` of 100,000 tasks against a `--dry-run` agent on this
machine (the coordinator's whole path through the agent launcher, no Slurm), as in
agents/run_agents.py; --slurm adds `chorus launch` of 5,000 /bin/true on the 4-node test cluster.
"""
import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import median, timed, write_result  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--before", required=True)
ap.add_argument("--after", default="build")
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--launch-tasks", type=int, default=5000)
ap.add_argument("--function-tasks", type=int, default=1000000)
ap.add_argument("--agent-tasks", type=int, default=100000)
ap.add_argument("--slurm", action="store_true", help="also chorus launch on the Slurm test cluster")
ap.add_argument("--figures", default="launch,function,agents,uwfq",
                help="which figures, of launch,function,agents,uwfq (each build needs only the "
                     "programs of its figures: uwfq alone needs bench/chorus_micro_bench)")
ap.add_argument("--name", default="compare_builds",
                help="results/NAME.{json,md} and the README section of that name")
args = ap.parse_args()

builds = {"before": os.path.abspath(args.before), "after": os.path.abspath(args.after)}
work = tempfile.mkdtemp(prefix="chorus-compare-")


def workflow(name, tasks):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"name: {name}\ntasks:\n  - name: t\n"
                f"    foreach: {{i: \"range(0, {tasks})\"}}\n    command: [/bin/true]\n")
    return path


launch_wf = workflow("launch", args.launch_tasks)
noop_wf = workflow("noop", args.agent_tasks)


def launch_rate(build, tag):
    spawn = os.path.join(build, "bench", "spawn_baseline")
    _, proc = timed([spawn, str(args.launch_tasks), "2"])
    base = json.loads(proc.stdout)["tasks_per_s"]
    state = os.path.join(work, "state-" + tag)
    dt, _ = timed([os.path.join(build, "bin", "chorus"), "run", launch_wf, "--state", state],
                  cwd=work)
    shutil.rmtree(state, ignore_errors=True)
    return {"launch_tasks_per_s": args.launch_tasks / dt, "spawn_tasks_per_s": base,
            "launch_ratio": args.launch_tasks / dt / base}


def function_tasks(build, tag):
    state = os.path.join(work, "fn-" + tag)
    _, proc = timed([os.path.join(build, "bench", "embed_noop"), str(args.function_tasks), state])
    shutil.rmtree(state, ignore_errors=True)
    return {"function_tasks_per_s": json.loads(proc.stdout)["tasks_per_s"]}


def agent_tasks(build, tag):
    chorus = os.path.join(build, "bin", "chorus")
    state = os.path.join(work, "agents-" + tag)
    err_path = os.path.join(work, f"agents-{tag}.err")
    err = open(err_path, "w+")
    t0 = time.perf_counter()
    coord = subprocess.Popen([chorus, "run", noop_wf, "--state", state, "--agents", "1"],
                             cwd=work, stdout=subprocess.DEVNULL, stderr=err)
    invite = None
    while invite is None:
        err.seek(0)
        invite = re.search(r"--connect (\S+) --keys (\S+)", err.read())
        if coord.poll() is not None:
            raise RuntimeError("chorus run --agents 1 exited early:\n" + open(err_path).read())
        time.sleep(0.01)
    agent = subprocess.Popen([chorus, "agent", "--connect", invite[1], "--keys", invite[2],
                              "--node", "solo", "--cores", "1000000", "--dry-run"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if coord.wait() != 0:
        raise RuntimeError("chorus run --agents 1 failed:\n" + open(err_path).read()[-2000:])
    whole = time.perf_counter() - t0
    agent.wait()
    shutil.rmtree(state, ignore_errors=True)
    return {"agent_tasks_per_s": args.agent_tasks / whole}


def uwfq_decisions(build, tag):
    out = subprocess.run(
        [os.path.join(build, "bench", "chorus_micro_bench"),
         "--benchmark_filter=^decisions/uwfq/100000$", "--benchmark_format=json"],
        capture_output=True, text=True, check=True).stdout
    b = json.loads(out)["benchmarks"][0]
    return {"uwfq_decisions_per_s": b["items_per_second"]}


def slurm_launch(build, tag):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cluster = os.path.join(repo, "tests", "slurm", "cluster.sh")
    if subprocess.run([cluster, "status"], capture_output=True).returncode != 0:
        subprocess.run([cluster, "start", "4"], check=True, capture_output=True)
        started_cluster.append(cluster)  # stopped at the end, even when a figure fails
    os.environ.setdefault("SLURM_CONF", "/tmp/chorus-slurm/etc/slurm.conf")
    times = os.path.join(work, "times-" + tag)
    state = os.path.join(work, "slurm-" + tag)
    chorus = os.path.join(build, "bin", "chorus")
    script = (f"t0=$(date +%s.%N); {chorus} launch {launch_wf} --state {state} > {work}/{tag}.log"
              f" 2>&1; rc=$?; t1=$(date +%s.%N); echo $t0 $t1 $rc > {times}")
    timed(["sbatch", "-N", "4", "--exclusive", "--wait", "-t", "30:00", "-o", os.devnull,
           "--wrap", script], cwd=work)
    t0, t1, rc = open(times).read().split()
    if rc != "0":
        raise RuntimeError(f"chorus launch failed ({rc})")
    shutil.rmtree(state, ignore_errors=True)
    return {"slurm_agents_tasks_per_s": args.launch_tasks / (float(t1) - float(t0))}


by_name = {"launch": launch_rate, "function": function_tasks, "agents": agent_tasks,
           "uwfq": uwfq_decisions}
unknown = [f for f in args.figures.split(",") if f not in by_name]
if unknown:
    sys.exit(f"compare_builds: unknown figure(s) {', '.join(unknown)}; "
             f"known: {', '.join(by_name)}")
figures = [by_name[f] for f in args.figures.split(",")]
if args.slurm:
    figures.append(slurm_launch)

started_cluster = []
atexit.register(lambda: [subprocess.run([c, "stop"], capture_output=True) for c in started_cluster])
runs = {"before": [], "after": []}
for r in range(args.repeats):
    order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
    rows = {side: {} for side in order}
    for measure in figures:
        for side in order:
            rows[side].update(measure(builds[side], f"{side}-{r}"))
    for side in order:
        runs[side].append(rows[side])
    print(json.dumps({"repeat": r, **rows}), flush=True)

LABELS = [
    ("launch_ratio", f"launch rate vs the spawn loop ({args.launch_tasks:,} /bin/true, `chorus run`)", "{:.3f}"),
    ("launch_tasks_per_s", "  `chorus run` tasks/s (whole command)", "{:,.0f}"),
    ("function_tasks_per_s", f"function tasks/s ({args.function_tasks:,} no-op, embed API, journal on)", "{:,.0f}"),
    ("agent_tasks_per_s", f"agents tasks/s (`chorus run --agents 1`, {args.agent_tasks:,} tasks, `--dry-run` agent)", "{:,.0f}"),
    ("uwfq_decisions_per_s", "uwfq decisions/s at 100k queued (micro bench)", "{:,.0f}"),
    ("slurm_agents_tasks_per_s", f"`chorus launch` with agents, 4 Slurm nodes, {args.launch_tasks:,} /bin/true", "{:,.0f}"),
]
summary = {"before": builds["before"], "after": builds["after"], "repeats": args.repeats,
           "medians": {}, "runs": runs}
lines = [f"| figure (median of {args.repeats}, alternating) | before | after | after/before |",
         "|---|---|---|---|"]
for key, label, fmt in LABELS:
    if key not in runs["after"][0]:
        continue
    b = median([row[key] for row in runs["before"]])
    a = median([row[key] for row in runs["after"]])
    summary["medians"][key] = {"before": b, "after": a, "ratio": a / b}
    lines.append(f"| {label} | {fmt.format(b)} | {fmt.format(a)} | {a / b:.3f} |")
table = "\n".join(lines)
write_result(args.name, summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
