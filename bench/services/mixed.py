#!/usr/bin/env python3
"""Mixed throughput (issue 3): N short `/bin/true` tasks alone, against the same N tasks while a
service and an MPI job run beside them in the SAME workflow, in alternating order.

Alone: `chorus run --cores S` of the N tasks (S = 2 by default).
Mixed: `chorus run --cores S+3` of one workflow holding
  - `mpi`: `kind: mpi`, 2 ranks of bench/services/mpi_spin (a real MPI program: every 10 ms
    the ranks meet in an MPI_Allreduce, otherwise they sleep), listed first so it starts first,
    and stopped by a file that the last task below creates;
  - the service `echo` (bench/coupling/coupling_echo, 1 core, stdout readiness probe), used by
    the N tasks (`uses: [echo]`: they start once it is ready and it stops after them);
  - the N tasks, then `stop` (after all of them) that touches mpi_spin's stop file.
The MPI job (2 cores) and the service (1 core) thus leave the short tasks S cores, as alone.

Short tasks/s = N / (last short task's end - first short task's start), both from the journal, in
both runs; the script reports how much of that span the MPI ranks (from after MPI_Init, as
mpi_spin prints them) and the service covered.
The whole command's wall time is recorded too. Target: mixed >= 80% of alone.

    python3 bench/services/mixed.py --build build [--tasks 2000] [--repeats 5] [--short-cores 2]
"""
import argparse
import json
import re
import os
import shutil
import tempfile

import svclib
from benchlib import median, write_result

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=2000)
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--short-cores", type=int, default=2, help="cores left to the short tasks")
ap.add_argument("--mpi-busy-ms", type=float, default=0.0,
                help="compute per 10 ms period in each MPI rank (default 0: it only communicates)")
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = svclib.program(build, "bin", "chorus")
echo = svclib.program(build, "bench", "coupling", "coupling_echo")
work = tempfile.mkdtemp(prefix="chorus-mixed-bench-")
spin = svclib.mpi_spin(build, work)
load_before = svclib.loadavg()
cores_alone, cores_mixed = args.short_cores, args.short_cores + 3
short = f'  - name: t\n    foreach: {{i: "range(0, {args.tasks})"}}\n    command: [/bin/true]\n'

alone_wf = os.path.join(work, "alone.yaml")
with open(alone_wf, "w") as f:
    f.write("name: alone\ntasks:\n" + short)


def mixed_workflow(r):
    stop = os.path.join(work, f"stop-{r}")
    path = os.path.join(work, f"mixed-{r}.yaml")
    with open(path, "w") as f:
        f.write(
            "name: mixed\n"
            "services:\n"
            "  - name: echo\n"
            f"    command: {svclib.yaml_list([echo])}\n"
            "    cores: 1\n"
            '    ready: {stdout: "listening on (tcp://\\\\S+)", timeout: 30s}\n'
            "tasks:\n"
            "  - name: mpi\n"
            "    kind: mpi\n"
            "    ranks: 2\n"
            f"    command: {svclib.yaml_list([spin, stop, '300', '10', str(args.mpi_busy_ms)])}\n"
            + short + "    uses: [echo]\n"
            "  - name: stop\n"
            "    after: [t]\n"
            f"    command: [touch, {json.dumps(stop)}]\n")
    return path


def short_rate(state):
    tasks = svclib.journal(state)
    start, end, count = svclib.span(tasks, "t[")
    if count != args.tasks or any(r["state"] != "succeeded" for n, r in tasks.items()):
        raise RuntimeError(f"not all tasks succeeded in {state}")
    return tasks, start, end, args.tasks / (end - start)


runs = []
argv_alone = argv_mixed = None
for r in range(args.repeats):
    order = ["alone", "mixed"] if r % 2 == 0 else ["mixed", "alone"]
    row = {"repeat": r, "loadavg_1m": svclib.loadavg()[0]}
    for side in order:
        state = os.path.join(work, f"state-{side}-{r}")
        if side == "alone":
            row["alone_wall_s"], argv_alone = svclib.chorus_run(chorus, alone_wf, state,
                                                                cores=cores_alone)
            _, _, _, row["alone_tasks_per_s"] = short_rate(state)
        else:
            row["mixed_wall_s"], argv_mixed = svclib.chorus_run(chorus, mixed_workflow(r), state,
                                                                cores=cores_mixed)
            tasks, start, end, row["mixed_tasks_per_s"] = short_rate(state)
            row["mpi_output"] = open(svclib.logs(state, "mpi.1.out")[0]).read().strip()
            m = re.search(r"from ([0-9.]+) to ([0-9.]+)", row["mpi_output"])
            if not m:
                raise RuntimeError(f"mpi_spin printed {row['mpi_output']!r}")
            # The MPI job's ranks run from after MPI_Init (mpirun's start-up comes first); the
            # service from its readiness, which the short tasks wait for.
            intervals = {"mpi": (float(m.group(1)), float(m.group(2))),
                         "echo": (tasks["echo"]["start"], tasks["echo"]["end"])}
            for name, (a, b) in intervals.items():
                covered = max(0.0, min(b, end) - max(a, start)) / (end - start)
                row[f"{name}_covers_span"] = round(covered, 4)
            row["mpi_ranks_up_after_first_short_ms"] = 1000 * (intervals["mpi"][0] - start)
        shutil.rmtree(state, ignore_errors=True)
    row["ratio"] = row["mixed_tasks_per_s"] / row["alone_tasks_per_s"]
    runs.append(row)
    print(json.dumps(row), flush=True)
shutil.rmtree(work, ignore_errors=True)

alone = median([x["alone_tasks_per_s"] for x in runs])
mixed = median([x["mixed_tasks_per_s"] for x in runs])
ratio = median([x["ratio"] for x in runs])
covers_mpi = median([x["mpi_covers_span"] for x in runs])
covers_echo = min(x["echo_covers_span"] for x in runs)
summary = {
    "command": svclib.command_line(),
    "commit": svclib.git_head(os.path.dirname(os.path.dirname(svclib.HERE))),
    "chorus_argv_alone": argv_alone, "chorus_argv_mixed": argv_mixed,
    "tasks": args.tasks, "repeats": args.repeats, "cores_alone": cores_alone,
    "cores_mixed": cores_mixed, "mpi_busy_ms_per_10ms": args.mpi_busy_ms,
    "loadavg_before": load_before, "loadavg_after": svclib.loadavg(),
    "alone_tasks_per_s_median": alone, "mixed_tasks_per_s_median": mixed, "ratio_median": ratio,
    "alone_wall_s_median": median([x["alone_wall_s"] for x in runs]),
    "mixed_wall_s_median": median([x["mixed_wall_s"] for x in runs]),
    "mpi_ranks_cover_short_span_median": covers_mpi,
    "service_covers_short_span_min": covers_echo,
    "target_ratio": 0.80, "runs": runs,
}
table = "\n".join([
    "### Mixed throughput: short tasks beside an MPI job and a service (issue 3; target >= 80%)",
    f"N = {args.tasks} `/bin/true` tasks; alone `--cores {cores_alone}`, mixed `--cores "
    f"{cores_mixed}` = {cores_alone} + MPI job (2 ranks of `mpi_spin`, Allreduce every 10 ms, "
    f"{args.mpi_busy_ms:g} ms compute per period) + service `echo` (1 core, used by the tasks); "
    f"rate over the short tasks' span in the journal, medians of {args.repeats} alternating pairs "
    f"(load average {load_before[0]:.1f} before, {summary['loadavg_after'][0]:.1f} after). The MPI "
    f"ranks (after mpirun's start-up and MPI_Init) ran over {100 * covers_mpi:.0f}% of the short "
    f"tasks' span (median), the service over >= {100 * covers_echo:.0f}% (least)",
    "",
    "| short tasks alone (tasks/s) | beside an MPI job and a service (tasks/s) | ratio (median of "
    "pairs) | whole command alone / mixed (s) | target |",
    "|---|---|---|---|---|",
    f"| {alone:,.0f} | {mixed:,.0f} | {ratio:.2f} | {summary['alone_wall_s_median']:.2f} / "
    f"{summary['mixed_wall_s_median']:.2f} | >= 0.80: {'met' if ratio >= 0.8 else 'missed'} |",
    "",
    f"`{summary['command']}`",
])
write_result("mixed", summary, table)
print(table)
