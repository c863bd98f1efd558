#!/usr/bin/env python3
"""MPI start-up overhead (issue 3): `chorus run` of a workflow with ONE `kind: mpi` task of 2 ranks
running tests/programs/mpi_hello, against the command Chorus itself runs for it
(`mpirun -np 2 --oversubscribe --bind-to none mpi_hello`, with OMPI_ALLOW_RUN_AS_ROOT{,_CONFIRM}=1
when root: MpirunCommand in adapters/mpi/mpi_command.cpp) started alone, in alternating order.
The added start-up time is the median over repeats of (chorus wall - mpirun wall) of each pair.
Target: < 50 ms.

Breakdown: the same pairing for one `/bin/true` task (`chorus run` vs /bin/true alone), i.e. the
coordinator's fixed cost (start, workflow parse, journal create + writes, exit), of which
`chorus validate` of the same file shows the process start (exec, shared libraries) and parse,
and, from the
journal, the MPI task's own span (running -> succeeded) minus mpirun alone, i.e. what the MPI
launcher adds around the mpirun process, and the whole `chorus run` minus that span (the
coordinator's cost outside the task, measured within one run, free of mpirun's own noise). Each `chorus run` gets a fresh state folder (a new
SQLite journal), as a first run of a workflow does.

    python3 bench/services/mpi_overhead.py --build build [--repeats 30]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

import svclib
from benchlib import median, timed, write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--repeats", type=int, default=30)
args = ap.parse_args()
if args.repeats < 10:
    ap.error("--repeats must be >= 10")

build = os.path.abspath(args.build)
chorus = svclib.program(build, "bin", "chorus")
hello = svclib.program(build, "tests", "mpi_hello")
work = tempfile.mkdtemp(prefix="chorus-mpi-bench-")
load_before = svclib.loadavg()

mpi_wf = os.path.join(work, "mpi.yaml")
with open(mpi_wf, "w") as f:
    f.write("name: mpi\ntasks:\n  - name: hello\n    kind: mpi\n    ranks: 2\n"
            f"    command: {svclib.yaml_list([hello])}\n")
true_wf = os.path.join(work, "true.yaml")
with open(true_wf, "w") as f:
    f.write("name: true\ntasks:\n  - name: t\n    command: [/bin/true]\n")
mpirun = svclib.mpirun_argv(2, [hello])
env = svclib.mpirun_env()
state = os.path.join(work, "state")

# One of each first, not counted: page cache, Open MPI's component files, the dynamic loader.
timed(mpirun, env=env, cwd=work)
svclib.chorus_run(chorus, mpi_wf, state)

runs = []
chorus_argv = None
for r in range(args.repeats):
    order = ["alone", "chorus"] if r % 2 == 0 else ["chorus", "alone"]
    row = {"repeat": r, "loadavg_1m": svclib.loadavg()[0]}
    for side in order:
        if side == "alone":
            row["mpirun_s"], proc = timed(mpirun, env=env, cwd=work)
            ranks = sorted(line for line in proc.stdout.splitlines() if line.startswith("rank "))
            if len(ranks) != 2:
                raise RuntimeError(f"mpirun alone printed {proc.stdout!r}")
            row["true_s"], _ = timed(["/bin/true"])
            row["chorus_validate_s"], _ = timed([chorus, "validate", true_wf], cwd=work)
        else:
            row["chorus_mpi_s"], chorus_argv = svclib.chorus_run(chorus, mpi_wf, state)
            task = svclib.journal(state)["hello"]
            if task["state"] != "succeeded":
                raise RuntimeError(f"the MPI task ended {task['state']}: {task['detail']}")
            row["chorus_mpi_task_span_s"] = task["end"] - task["start"]
            row["chorus_true_s"], _ = svclib.chorus_run(chorus, true_wf, state)
    row["added_s"] = row["chorus_mpi_s"] - row["mpirun_s"]
    row["coordinator_s"] = row["chorus_true_s"] - row["true_s"]
    row["process_parse_s"] = row["chorus_validate_s"] - row["true_s"]
    row["outside_task_s"] = row["chorus_mpi_s"] - row["chorus_mpi_task_span_s"]
    row["launcher_s"] = row["chorus_mpi_task_span_s"] - row["mpirun_s"]
    runs.append(row)
    print(json.dumps(row), flush=True)
shutil.rmtree(work, ignore_errors=True)


def ms(key):
    return 1000 * median([x[key] for x in runs])


ldd = subprocess.run(["ldd", chorus], capture_output=True, text=True).stdout
shared_libs = sum(1 for line in ldd.splitlines() if ".so" in line and "vdso" not in line)
summary = {
    "chorus_shared_libraries": shared_libs,
    "command": svclib.command_line(),
    "commit": svclib.git_head(os.path.dirname(os.path.dirname(svclib.HERE))),
    "mpirun_argv": mpirun, "mpirun_env_added": {k: env[k] for k in env if k.startswith("OMPI_")},
    "chorus_argv": chorus_argv, "repeats": args.repeats,
    "loadavg_before": load_before, "loadavg_after": svclib.loadavg(),
    "median_ms": {k: ms(k) for k in ("mpirun_s", "chorus_mpi_s", "added_s", "true_s",
                                     "chorus_true_s", "coordinator_s", "chorus_validate_s",
                                     "process_parse_s", "chorus_mpi_task_span_s", "outside_task_s",
                                     "launcher_s")},
    "added_ms_quartiles": [1000 * statistics.quantiles([x["added_s"] for x in runs], n=4)[i]
                           for i in (0, 2)],
    "mpirun_ms_min_max": [1000 * min(x["mpirun_s"] for x in runs),
                          1000 * max(x["mpirun_s"] for x in runs)],
    "target_added_ms": 50.0,
    "runs": runs,
}
m = summary["median_ms"]
added = m["added_s"]
table = "\n".join([
    "### MPI start-up overhead of `chorus run` (issue 3; target < 50 ms)",
    f"One `kind: mpi` task, 2 ranks of `tests/programs/mpi_hello`; medians of {args.repeats} "
    f"alternating pairs (load average {load_before[0]:.1f} before, "
    f"{summary['loadavg_after'][0]:.1f} after)",
    "",
    "| what | alone (ms) | through `chorus run` (ms) | added (ms, median of pair differences) | "
    "target |",
    "|---|---|---|---|---|",
    f"| `{' '.join(os.path.basename(a) if a == hello else a for a in mpirun)}` vs a workflow "
    f"of that one MPI task (whole command) | {m['mpirun_s']:.1f} | {m['chorus_mpi_s']:.1f} | "
    f"{added:.1f} (quartiles {summary['added_ms_quartiles'][0]:.0f} .. "
    f"{summary['added_ms_quartiles'][1]:.0f}) | < 50 ms: {'met' if added < 50 else 'missed'} |",
    f"| breakdown: `/bin/true` vs a workflow of one `/bin/true` task (coordinator start, parse, "
    f"journal, exit) | {m['true_s']:.1f} | {m['chorus_true_s']:.1f} | {m['coordinator_s']:.1f} "
    "| - |",
    f"| of which: `/bin/true` vs `chorus validate` of that workflow (exec, loading "
    f"{shared_libs} shared libraries, parse) | "
    f"{m['true_s']:.1f} | {m['chorus_validate_s']:.1f} | {m['process_parse_s']:.1f} | - |",
    f"| breakdown: mpirun alone vs the MPI task's span in the journal (running -> succeeded) | "
    f"{m['mpirun_s']:.1f} | {m['chorus_mpi_task_span_s']:.1f} | {m['launcher_s']:.1f} | - |",
    f"| within each `chorus run` (no mpirun noise): whole command minus the MPI task's span | - "
    f"| {m['chorus_mpi_s']:.1f} - {m['chorus_mpi_task_span_s']:.1f} | {m['outside_task_s']:.1f} "
    f"| < 50 ms: {'met' if m['outside_task_s'] < 50 else 'missed'} |",
    "",
    f"mpirun alone ranged {summary['mpirun_ms_min_max'][0]:.0f} .. "
    f"{summary['mpirun_ms_min_max'][1]:.0f} ms over the repeats (the spread the median of "
    "differences has to see through).",
    "",
    f"`{summary['command']}`",
])
write_result("mpi_overhead", summary, table)
print(table)
