#!/usr/bin/env python3
"""chorus serve (issue 17): submission latency and sustained submissions/s over the instance's
Unix socket, and task throughput through the server against `chorus run` of the same work, side
by side in the same run, alternating, medians of --repeats.

    python3 bench/serve/run_serve.py --build build [--submissions 1000] [--tasks 2000] [--repeats 5]

- latency: `serve_submit` (the CLI's protocol without its process start-up), one client, N
  one-task workflows; p50/p99 per request. Also `chorus submit` itself (the whole command, what a
  user waits for) for a tenth of N.
- submissions/s: the same N from 10 concurrent clients.
- throughput: T /bin/true tasks in one workflow, and the same T as T/10 workflows of 10 tasks,
  through a running server (first submission to the last run's end, submitted over the socket by
  serve_submit --wait) against `chorus run` of the T tasks in one file (the whole command, its
  start-up included). Target: >= 0.9x.
"""
import argparse
import json
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
ap.add_argument("--submissions", type=int, default=1000)
ap.add_argument("--tasks", type=int, default=2000)
ap.add_argument("--repeats", type=int, default=5)
args = ap.parse_args()

build = os.path.abspath(args.build)
chorus = os.path.join(build, "bin", "chorus")
submitter = os.path.join(build, "bench", "serve_submit")
work = tempfile.mkdtemp(prefix="chorus-serve-bench-")


def write(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def foreach_workflow(name, n):
    return write(name, f"name: {name.split('.')[0]}\ntasks:\n  - name: t\n"
                       f"    foreach: {{i: \"range(0, {n})\"}}\n    command: [/bin/true]\n")


one = foreach_workflow("one.yaml", 1)
ten = foreach_workflow("ten.yaml", 10)
big = foreach_workflow("big.yaml", args.tasks)


class Server:
    def __init__(self, tag):
        self.state = os.path.join(work, "state-" + tag)
        self.log = open(os.path.join(work, "serve-" + tag + ".log"), "w")
        self.proc = subprocess.Popen([chorus, "serve", "--state", self.state], cwd=work,
                                     stdout=self.log, stderr=self.log)
        self.sock = os.path.join(self.state, "serve.sock")
        deadline = time.time() + 30
        while not os.path.exists(self.sock):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chorus serve did not start; see " + self.log.name)
            time.sleep(0.02)

    def chorus(self, *a):
        return [chorus, *a, "--server", self.sock]

    def wait_all_ended(self, count, timeout=600):
        """Until `count` runs are listed and none runs."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            out = subprocess.run(self.chorus("list", "--json"), capture_output=True, text=True,
                                 cwd=work).stdout
            runs = json.loads(out) if out.strip() else []
            if len(runs) >= count and all(r["status"] != "running" for r in runs):
                bad = [r for r in runs if r["status"] != "succeeded"]
                if bad:
                    raise RuntimeError(f"{len(bad)} runs did not succeed: {bad[:3]}")
                return
            time.sleep(0.05)
        raise RuntimeError("runs did not end in time")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        self.log.close()
        shutil.rmtree(self.state, ignore_errors=True)


def submit_protocol(server, n, clients, prefix):
    _, proc = timed([submitter, server.sock, one, str(n), str(clients), prefix], cwd=work)
    return json.loads(proc.stdout)


def submit_cli(server, n):
    lat = []
    for i in range(n):
        dt, _ = timed(server.chorus("submit", one, "--key", f"cli-{i}"), cwd=work)
        lat.append(dt * 1000)
    lat.sort()
    return {"p50_ms": lat[len(lat) // 2], "p99_ms": lat[min(len(lat) - 1, int(0.99 * len(lat)))]}


def served_wall(workflow, count):
    """First submission to the last run's end on a fresh server: `count` submissions of
    `workflow` one after another over one connection (serve_submit --wait)."""
    server = Server("tp")
    try:
        _, proc = timed([submitter, server.sock, workflow, str(count), "1", "w", "--wait"],
                        cwd=work)
        r = json.loads(proc.stdout)
        if r["not_succeeded"]:
            raise RuntimeError(f"{r['not_succeeded']} served runs did not succeed")
        return r["until_ended_s"]
    finally:
        server.stop()


rows = []
for r in range(args.repeats):
    row = {}
    server = Server(f"lat{r}")
    try:
        lat = submit_protocol(server, args.submissions, 1, f"one{r}")
        row.update({"p50_ms": lat["p50_ms"], "p99_ms": lat["p99_ms"], "max_ms": lat["max_ms"]})
        server.wait_all_ended(args.submissions)
        many = submit_protocol(server, args.submissions, 10, f"ten{r}")
        row["per_s_10_clients"] = many["per_s"]
        server.wait_all_ended(2 * args.submissions)
        cli = submit_cli(server, max(10, args.submissions // 10))
        row.update({"cli_p50_ms": cli["p50_ms"], "cli_p99_ms": cli["p99_ms"]})
    finally:
        server.stop()
    # Throughput, alternating the order so drift on a shared machine hits both sides alike.
    order = ["run", "served"] if r % 2 == 0 else ["served", "run"]
    for side in order:
        if side == "run":
            state = os.path.join(work, f"run-state-{r}")
            dt, _ = timed([chorus, "run", big, "--state", state], cwd=work)
            row["run_wall_s"] = dt
            shutil.rmtree(state, ignore_errors=True)
        else:
            row["served_one_wall_s"] = served_wall(big, 1)
            row["served_many_wall_s"] = served_wall(ten, args.tasks // 10)
    row["ratio_one"] = row["run_wall_s"] / row["served_one_wall_s"]
    row["ratio_many"] = row["run_wall_s"] / row["served_many_wall_s"]
    rows.append(row)
    print(json.dumps(row), flush=True)


def med(key):
    return median([x[key] for x in rows])


summary = {k: med(k) for k in rows[0]}
summary.update({"submissions": args.submissions, "tasks": args.tasks, "repeats": args.repeats,
                "target_ratio": 0.9, "runs": rows})
T = args.tasks
table = (
    "| measure | through `chorus serve` | baseline | ratio (median of pairs) | target |\n"
    "|---|---|---|---|---|\n"
    f"| submission latency, protocol, 1 client, {args.submissions} one-task workflows | "
    f"p50 {med('p50_ms'):.2f} ms, p99 {med('p99_ms'):.2f} ms | - | - | report |\n"
    f"| submission latency, `chorus submit` (whole command) | "
    f"p50 {med('cli_p50_ms'):.1f} ms, p99 {med('cli_p99_ms'):.1f} ms | - | - | report |\n"
    f"| sustained submissions/s, 10 clients | {med('per_s_10_clients'):.0f}/s | - | - | report |\n"
    f"| {T} /bin/true tasks in one submission (tasks/s) | {T / med('served_one_wall_s'):.0f} | "
    f"`chorus run`: {T / med('run_wall_s'):.0f} | {med('ratio_one'):.2f} | >= 0.9 |\n"
    f"| the same as {T // 10} submissions of 10 tasks (tasks/s) | "
    f"{T / med('served_many_wall_s'):.0f} | `chorus run`: {T / med('run_wall_s'):.0f} | "
    f"{med('ratio_many'):.2f} | >= 0.9 |"
)
write_result("serve", summary, table)
print(table)
shutil.rmtree(work, ignore_errors=True)
