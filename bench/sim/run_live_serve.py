#!/usr/bin/env python3
"""One instance of each new generator (issue 18) run live through `chorus serve`, beside the simulator.

The live check of bench/sim/run_live_generators.py goes through the embed API (one process, one
user, function tasks, clock tasks for arrivals). This one goes through the product a shared
machine would use: a `chorus serve` instance (`--queue POLICY --cores 32`, first-fit on this
machine) and one Unix account per workload user, each job submitted with `chorus submit` by its
user at its arrival time, its pieces `sleep` processes run as that user. So the queue policy
orders real users' runs, as it does in production.

For each mix (bursty, zipf) the instance is `chorus simulate -w gen:MIX --scale S --partition 1s
--workload-out` (seed 1, so a piece is a task). For each policy a fresh instance and state folder;
the script sleeps until each job's arrival and submits it (without waiting for the submission to
return). A job's live arrival is its run's creation time in the journal, its end the last task's
end event there; the simulator then replays the same jobs with the live arrivals
(`chorus simulate -w replay.json --cluster 1x32 --queue POLICY --records`) and the small and
large jobs' mean responses are compared (small/large as the simulator's metrics classify them).
Target (issue 18): live within 10% of the simulator.

Needs root (useradd, tasks run as their submitters); prints a line and stops otherwise. Every
account, process and folder it makes is removed at the end, also after an error or Ctrl-C.
Results: bench/results/live_serve.{json,md} (--name). Python 3 standard library only.

    sudo bench/sim/run_live_serve.py [--chorus build/bin/chorus] [--mixes bursty,zipf]
        [--policies fifo,fair,uwfq] [--scale 0.1] [--repeats 1] [--lane auto|N]

--lane adds uwfq with the short-job lane (serve.yaml `policy_options: {lane_cores: N}`, the
replay `--option lane_cores=N`) as a fourth policy, `uwfq-laneN`.
"""
import argparse
import json
import os
import pwd
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import write_result  # noqa: E402

CORES = 32
USER_PREFIX = "chlv"  # accounts chlv1, chlv2, ...: made and removed by this script


class Accounts:
    """One Unix account per workload user, made here and removed by close()."""

    def __init__(self):
        self.made = []
        self.by_user = {}

    def account(self, user):
        if user in self.by_user:
            return self.by_user[user]
        name = "%s%d" % (USER_PREFIX, len(self.by_user) + 1)
        try:
            pwd.getpwnam(name)
            raise RuntimeError("account %s exists already (left by an interrupted run? "
                               "`userdel %s` if so)" % (name, name))
        except KeyError:
            pass
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
        self.made.append(name)
        entry = pwd.getpwnam(name)
        self.by_user[user] = (name, entry.pw_uid, entry.pw_gid)
        return self.by_user[user]

    def close(self):
        for name in self.made:
            subprocess.run(["userdel", name], capture_output=True)
        self.made = []


def job_yaml(index, job):
    """A workflow of the job's tasks: one `sleep` per task, its runtime as its estimate."""
    lines = ["name: j%d" % index, "tasks:"]
    for t, task in enumerate(job["tasks"]):
        runtime = task["runtime"]
        line = "  - {name: t%d, command: [sleep, \"%.9f\"], estimate: %.9fs, job: j%d" % (
            t, runtime, runtime, index)
        if task.get("cores", 1) != 1:
            line += ", cores: %d" % task["cores"]
        if task.get("after"):
            line += ", after: [%s]" % ", ".join("t%d" % a for a in task["after"])
        lines.append(line + "}")
    if job.get("weight", 1) != 1:
        raise RuntimeError("job weights are not carried to the workflow files here")
    return "\n".join(lines) + "\n"


def wait_for(path, seconds, proc):
    deadline = time.time() + seconds
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError("chorus serve exited (%d) before it listened" % proc.returncode)
        if time.time() > deadline:
            raise RuntimeError("chorus serve did not make %s within %d s" % (path, seconds))
        time.sleep(0.05)


def journal(state):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(state, "chorus.db"), uri=True)
    try:
        runs = {r[0]: (r[1], r[2], r[3]) for r in db.execute("SELECT id, key, status, created FROM runs")}
        ends = dict(db.execute(
            "SELECT run, MAX(time) FROM events WHERE state IN ('succeeded','failed','cancelled') "
            "GROUP BY run"))
    finally:
        db.close()
    return runs, ends


def queue_of(policy):
    """(queue policy, its options) of a policy label: uwfq-laneauto is uwfq, lane_cores auto."""
    if policy.startswith("uwfq-lane"):
        return "uwfq", {"lane_cores": policy[len("uwfq-lane"):]}
    return policy, {}


def live_run(chorus, inst, policy, work, accounts):
    """Runs the instance through a fresh `chorus serve`; returns {job id: (arrival, end)}."""
    state = os.path.join(work, "state-" + policy)
    os.makedirs(state)
    jobs = inst["jobs"]
    files = []
    for i, job in enumerate(jobs):
        name, uid, gid = accounts.account(job["user"])
        home = os.path.join(work, name)
        if not os.path.isdir(home):
            os.makedirs(home)
            os.chown(home, uid, gid)
            os.chmod(home, 0o700)
        path = os.path.join(home, "j%d-%s.yaml" % (i, policy))
        with open(path, "w") as f:
            f.write(job_yaml(i, job))
        os.chown(path, uid, gid)
        files.append((path, home, uid, gid))
    queue, options = queue_of(policy)
    config = os.path.join(work, "serve-%s.yaml" % policy)
    with open(config, "w") as f:
        f.write("queue: %s\ncores: %d\n" % (queue, CORES))
        if options:
            f.write("policy_options: {%s}\n" % ", ".join("%s: %s" % kv for kv in options.items()))
    log = open(os.path.join(work, "serve-%s.log" % policy), "w")
    serve = subprocess.Popen([chorus, "serve", "--state", state, "--config", config],
                             stdout=log, stderr=subprocess.STDOUT)
    submits = []
    try:
        sock = os.path.join(state, "serve.sock")
        wait_for(sock, 30, serve)
        order = sorted(range(len(jobs)), key=lambda i: jobs[i]["arrival"])
        t0 = time.time() + 1.0
        for i in order:
            delay = t0 + jobs[i]["arrival"] - time.time()
            if delay > 0:
                time.sleep(delay)
            path, home, uid, gid = files[i]
            env = {"PATH": "/usr/bin:/bin", "HOME": home, "CHORUS_SERVER": sock}
            submits.append((i, subprocess.Popen(
                [chorus, "submit", path, "--json"], cwd=home, env=env, user=uid, group=gid,
                extra_groups=[], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        run_of = {}
        for i, p in submits:
            out, err = p.communicate(timeout=120)
            if p.returncode != 0:
                raise RuntimeError("chorus submit of job %s failed: %s" % (jobs[i]["id"], err))
            run_of[i] = json.loads(out)["run"]
        deadline = time.time() + 600
        while True:
            runs, ends = journal(state)
            done = [r for r in run_of.values()
                    if r in runs and runs[r][1] in ("succeeded", "failed", "cancelled")]
            if len(done) == len(run_of):
                break
            if time.time() > deadline:
                raise RuntimeError("%d of %d runs not ended after 600 s" % (
                    len(run_of) - len(done), len(run_of)))
            time.sleep(0.5)
        failed = [r for r in run_of.values() if runs[r][1] != "succeeded"]
        if failed:
            raise RuntimeError("runs did not succeed: %s (state folder %s)" % (failed, state))
        return {jobs[i]["id"]: (runs[r][2] - t0, ends[runs[r][0]] - t0) for i, r in run_of.items()}
    finally:
        for _, p in submits:
            if p.poll() is None:
                p.kill()
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
        log.close()


def replay(chorus, inst, live, policy, work):
    """The simulator's records of the same jobs arriving when they arrived live."""
    jobs = []
    for job in inst["jobs"]:
        j = dict(job)
        j["arrival"] = max(0.0, live[job["id"]][0])
        jobs.append(j)
    path = os.path.join(work, "replay-%s.json" % policy)
    with open(path, "w") as f:
        json.dump({"name": inst["name"], "jobs": jobs}, f)
    rec = os.path.join(work, "records-%s.json" % policy)
    queue, options = queue_of(policy)
    cmd = [chorus, "simulate", "-w", path, "--cluster", "1x%d" % CORES, "--queue", queue,
           "--records", rec]
    for kv in options.items():
        cmd += ["--option", "%s=%s" % kv]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(rec) as f:
        return json.load(f)


def compare(records, live):
    works = sorted(r["work_core_s"] for r in records)
    median_work = statistics.median(works)
    out = {}
    for size in ("small", "large"):
        rows = [r for r in records
                if (r["size"] if r["size"] != "unknown" else
                    ("small" if r["work_core_s"] <= median_work else "large")) == size]
        sim = statistics.mean(r["response_s"] for r in rows)
        real = statistics.mean(live[r["job"]][1] - live[r["job"]][0] for r in rows)
        out[size] = {"jobs": len(rows), "live_s": real, "sim_s": sim, "ratio": real / sim}
    return out


def _interrupted(signum, _frame):
    raise KeyboardInterrupt(signum)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
    ap.add_argument("--mixes", default="bursty,zipf")
    ap.add_argument("--policies", default="fifo,fair,uwfq")
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--lane", default="", help="also uwfq with lane_cores=N or auto")
    ap.add_argument("--name", default="live_serve")
    args = ap.parse_args()
    policies = args.policies.split(",") + (["uwfq-lane" + args.lane] if args.lane else [])
    if os.geteuid() != 0:
        print("run_live_serve: needs root (it makes Unix accounts, and chorus serve runs each "
              "task as its submitter); nothing done")
        return 0
    # Ctrl-C and SIGTERM end the run through the cleanup below (SIGINT set explicitly: a shell
    # that starts the script in the background leaves it ignored).
    signal.signal(signal.SIGINT, _interrupted)
    signal.signal(signal.SIGTERM, _interrupted)
    accounts = Accounts()
    work = tempfile.mkdtemp(prefix="chorus-live-serve-")
    os.chmod(work, 0o755)
    results = {}
    try:
        # Its own copy: a rebuild while it runs would otherwise swap the binary under the
        # submissions (seen: exec refused while the linker wrote it).
        chorus = os.path.join(work, "chorus")
        shutil.copy2(os.path.abspath(args.chorus), chorus)
        for mix in args.mixes.split(","):
            inst_path = os.path.join(work, mix + ".json")
            subprocess.run([chorus, "simulate", "-w", "gen:" + mix, "--scale", str(args.scale),
                            "--partition", "1s", "--cluster", "1x%d" % CORES, "--workload-out",
                            inst_path], check=True, capture_output=True)
            with open(inst_path) as f:
                inst = json.load(f)
            tasks = sum(len(j["tasks"]) for j in inst["jobs"])
            results[mix] = {"jobs": len(inst["jobs"]), "tasks": tasks, "policies": {}}
            for r in range(args.repeats):
                for policy in policies:
                    live = live_run(chorus, inst, policy, work, accounts)
                    recs = replay(chorus, inst, live, policy, work)
                    cmp_ = compare(recs, live)
                    late = max(live[j["id"]][0] - j["arrival"] for j in inst["jobs"])
                    results[mix]["policies"].setdefault(policy, []).append(
                        dict(cmp_, latest_arrival_s=late))
                    print("%s %s: small live %.3f s / sim %.3f s = %.3f; large %.3f / %.3f = %.3f"
                          " (arrivals up to %.3f s late)" % (
                              mix, policy, cmp_["small"]["live_s"], cmp_["small"]["sim_s"],
                              cmp_["small"]["ratio"], cmp_["large"]["live_s"],
                              cmp_["large"]["sim_s"], cmp_["large"]["ratio"], late), flush=True)
                    shutil.rmtree(os.path.join(work, "state-" + policy), ignore_errors=True)
    finally:
        accounts.close()
        shutil.rmtree(work, ignore_errors=True)

    lines = ["| mix (jobs / tasks) | policy | small mean live | simulated | live / sim | "
             "large mean live | simulated | live / sim |", "|---|---|---|---|---|---|---|---|"]
    for mix, m in results.items():
        for policy, reps in m["policies"].items():
            med = lambda size, key: statistics.median(x[size][key] for x in reps)  # noqa: E731
            lines.append("| %s (%d / %d) | %s | %.3f s | %.3f s | %.3f | %.3f s | %.3f s | %.3f |" % (
                mix, m["jobs"], m["tasks"], policy, med("small", "live_s"), med("small", "sim_s"),
                med("small", "ratio"), med("large", "live_s"), med("large", "sim_s"),
                med("large", "ratio")))
    table = "\n".join(lines) + (
        "\n\n`chorus serve --cores %d`, one Unix account per user, each job a `chorus submit` at "
        "its arrival (scale %g, 1 s pieces, seed 1); medians of %d repeat(s); target: within 10%%."
        % (CORES, args.scale, args.repeats))
    write_result(args.name, {"scale": args.scale, "cores": CORES, "repeats": args.repeats,
                             "mixes": results}, table)
    print(table)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("run_live_serve: interrupted; the accounts, instances and folders it made are removed",
              file=sys.stderr)
        sys.exit(130)
