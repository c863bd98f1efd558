#!/usr/bin/env python3
"""Launch rate: `chorus run` of N independent /bin/true tasks against a plain C posix_spawn loop
with 2 in flight (bench/tools/spawn_baseline.c), side by side in the same run, repeated; reports
medians and the ratio. Target (issue 2): chorus >= 70% of the baseline.

    python3 bench/launch_rate.py --build build [--tasks 5000] [--repeats 5]
"""
import argparse
import json
import os
import shutil
import tempfile

from benchlib import median, timed, write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=5000)
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = os.path.join(build, "bin", "chorus")
baseline = os.path.join(build, "bench", "spawn_baseline")
work = tempfile.mkdtemp(prefix="chorus-launch-bench-")
wf = os.path.join(work, "launch.yaml")
with open(wf, "w") as f:
    f.write(
        "name: launch\n"
        "tasks:\n"
        "  - name: t\n"
        f"    foreach: {{i: \"range(0, {args.tasks})\"}}\n"
        "    command: [/bin/true]\n"
    )

runs = []
for r in range(args.repeats):
    # Alternate the order so drift on a shared machine hits both sides alike.
    order = ["baseline", "chorus"] if r % 2 == 0 else ["chorus", "baseline"]
    row = {}
    for side in order:
        if side == "baseline":
            _, proc = timed([baseline, str(args.tasks), "2"])
            row["baseline_tasks_per_s"] = json.loads(proc.stdout)["tasks_per_s"]
        else:
            state = os.path.join(work, f"state-{r}")
            dt, _ = timed([chorus, "run", wf, "--state", state], cwd=work)
            row["chorus_tasks_per_s"] = args.tasks / dt
            row["chorus_wall_s"] = dt
            shutil.rmtree(state, ignore_errors=True)
    row["ratio"] = row["chorus_tasks_per_s"] / row["baseline_tasks_per_s"]
    runs.append(row)
    print(json.dumps(row), flush=True)

base = median([r["baseline_tasks_per_s"] for r in runs])
ch = median([r["chorus_tasks_per_s"] for r in runs])
ratio = median([r["ratio"] for r in runs])
summary = {
    "tasks": args.tasks,
    "repeats": args.repeats,
    "baseline_tasks_per_s_median": base,
    "chorus_tasks_per_s_median": ch,
    "ratio_median": ratio,
    "target_ratio": 0.70,
    "runs": runs,
}
table = (
    "| N | spawn loop (tasks/s) | `chorus run` (tasks/s, whole command) | ratio (median of pairs) | target |\n"
    "|---|---|---|---|---|\n"
    f"| {args.tasks} | {base:.0f} | {ch:.0f} | {ratio:.2f} | >= 0.70 |"
)
write_result("launch_rate", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
