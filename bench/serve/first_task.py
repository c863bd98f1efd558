#!/usr/bin/env python3
"""chorus serve's automatic allocation (issue 17): time from a submission that needs a new Slurm
allocation to its first task running, against `sbatch` of the same one-task work directly, on
the local Slurm cluster (tests/slurm/cluster.sh), alternating, medians of --repeats.

    python3 bench/serve/first_task.py --build build [--repeats 5]

- cold: a fresh `chorus serve` with `allocation: {slurm: {max_jobs: 1, nodes: 1}}` and no pilot;
  `chorus submit` of one task that writes `date +%s.%N`: submission to that time. Includes the
  CLI, the pilot thread's round (1 s), Slurm scheduling the pilot, its srun step, the agent's
  registration and the placement.
- warm: a second submission while that pilot is still up (what the pilot saves).
- sbatch: `sbatch -N 1 --exclusive --wrap "date +%s.%N > f"`: submission to that time.
"""
import argparse
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchlib import median, timed, write_result  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = os.path.join(build, "bin", "chorus")
repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
cluster = os.path.join(repo, "tests", "slurm", "cluster.sh")
subprocess.run([cluster, "start", "4"], check=True, capture_output=True)
atexit.register(lambda: subprocess.run([cluster, "stop"], capture_output=True))
os.environ["SLURM_CONF"] = "/tmp/chorus-slurm/etc/slurm.conf"
work = tempfile.mkdtemp(prefix="chorus-first-task-bench-")


def wait_for(path, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return float(open(path).read().split()[0])
        time.sleep(0.01)
    raise RuntimeError("no first task within %ds: %s" % (timeout, path))


def no_jobs():
    deadline = time.time() + 60
    while time.time() < deadline:
        if not subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip():
            return
        time.sleep(0.2)
    raise RuntimeError("jobs left in the queue")


def workflow(name, out):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"name: {name}\ntasks:\n  - name: t\n    command: \"date +%s.%N > {out}\"\n")
    return path


def served(r):
    state = os.path.join(work, f"st{r}")
    conf = os.path.join(work, "serve.yaml")
    with open(conf, "w") as f:
        f.write("allocation: {slurm: {max_jobs: 1, nodes: 1, walltime: 10m, idle_timeout: 30s}}\n")
    log = open(os.path.join(work, f"serve{r}.log"), "w")
    proc = subprocess.Popen([chorus, "serve", "--state", state, "--config", conf], cwd=work,
                            stdout=log, stderr=log)
    try:
        while not os.path.exists(os.path.join(state, "serve.sock")):
            time.sleep(0.02)
        out = {}
        for kind in ("cold", "warm"):
            f = os.path.join(work, f"{kind}{r}.t")
            wf = workflow(f"{kind}{r}", f)
            t0 = time.time()
            timed([chorus, "submit", wf, "--state", state], cwd=work)
            out[kind] = wait_for(f) - t0
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        log.close()
        no_jobs()


def sbatch(r):
    f = os.path.join(work, f"sbatch{r}.t")
    t0 = time.time()
    timed(["sbatch", "-N", "1", "--exclusive", "-o", os.devnull, "--wrap", f"date +%s.%N > {f}"],
          cwd=work)
    dt = wait_for(f) - t0
    no_jobs()
    return dt


rows = []
for r in range(args.repeats):
    row = {}
    for side in (["served", "sbatch"] if r % 2 == 0 else ["sbatch", "served"]):
        if side == "served":
            s = served(r)
            row["cold_s"], row["warm_s"] = s["cold"], s["warm"]
        else:
            row["sbatch_s"] = sbatch(r)
    row["cold_over_sbatch"] = row["cold_s"] / row["sbatch_s"]
    rows.append(row)
    print(row, flush=True)


def med(k):
    return median([x[k] for x in rows])


summary = {k: med(k) for k in rows[0]}
summary.update({"repeats": args.repeats, "runs": rows})
table = (
    "| submission to first task running | seconds (median) | vs `sbatch` (median of pairs) |\n"
    "|---|---|---|\n"
    f"| `chorus submit` into `chorus serve`, a new pilot job needed | {med('cold_s'):.2f} | "
    f"{med('cold_over_sbatch'):.2f}x |\n"
    f"| the same with that pilot already up | {med('warm_s'):.2f} | - |\n"
    f"| `sbatch --wrap` of the same task | {med('sbatch_s'):.2f} | 1 |"
)
write_result("serve_first_task", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
