"""The network test bed as the network-aware benchmarks use it (tests/netbed/netbed.py), the
seeded evaluation jobs, and running one `chorus data-job` on one node.

The bed of these benchmarks: four nodes whose best choice depends on the job and on the
background, not on one fixed ranking —
  n0  25 Mbit,  full CPU      (thin link)
  n1 100 Mbit,  full CPU
  n2 200 Mbit,  0.25 core     (a slow node: fat link, CPU quota)
  n3 200 Mbit,  full CPU      (fat link)
each with its seeded background (0-90% of its link, over 4 connections, changing per period)
and two stores: s0 near, s1 20 ms away each way (through delay_relay).
"""
import json
import os
import random
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH_DIR)
NETBED = os.path.join(REPO, "tests", "netbed", "netbed.py")

DEFAULT_NODES = "25,100,200,200"
DEFAULT_CPU = "0,0,0.25,0"
DEFAULT_STORE_DELAY = "0,20"
DEFAULT_LEVELS = "0,0.25,0.5,0.75,0.9"


def netbed(*args, check=True):
    r = subprocess.run([sys.executable, NETBED] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("netbed %s failed (%d): %s" % (args[0], r.returncode, r.stderr.strip()))
    return r


class Bed:
    """A bed for the life of a `with` block: `down` on the way out, whatever happened."""

    def __init__(self, build, prefix, nodes=DEFAULT_NODES, cpu=DEFAULT_CPU,
                 store_delay=DEFAULT_STORE_DELAY, levels=DEFAULT_LEVELS, seed=1, period=60):
        self.build = os.path.abspath(build)
        self.chorus = os.path.join(self.build, "bin", "chorus")
        self.relay = os.path.join(self.build, "tests", "delay_relay")
        self.prefix = prefix
        self.args = ["up", "--prefix", prefix, "--nodes", nodes, "--cpu", cpu, "--stores",
                     str(len(store_delay.split(","))), "--store-delay", store_delay,
                     "--chorus", self.chorus, "--relay", self.relay, "--bg-levels", levels,
                     "--bg-seed", str(seed), "--bg-period", str(period), "--no-bg"]
        self.desc = None

    def __enter__(self):
        netbed("down", "--prefix", self.prefix, check=False)
        r = netbed(*self.args, check=False)
        if r.returncode == 77:
            raise SystemExit(r.stderr.strip())
        if r.returncode != 0:
            raise RuntimeError("netbed up failed: " + r.stderr.strip())
        self.refresh()
        return self

    def __exit__(self, *exc):
        netbed("down", "--prefix", self.prefix, check=False)
        return False

    def refresh(self):
        self.desc = json.loads(netbed("describe", "--prefix", self.prefix).stdout)

    @property
    def nodes(self):
        return self.desc["nodes"]

    def store(self, name):
        return next(s for s in self.desc["stores"] if s["name"] == name)

    def background(self, seed, hold=None, off=False, settle=2.0):
        """Switches the background to seed's schedule, held at period `hold` (stationary), or
        running through its periods from now (hold None), or off."""
        args = ["bg", "--prefix", self.prefix, "--seed", str(seed)]
        if off:
            args.append("--off")
        elif hold is not None:
            args += ["--hold", str(hold)]
        netbed(*args)
        self.refresh()
        time.sleep(settle)  # the flows' TCP reaches its rate

    def background_rates(self, hold):
        sched = self.desc["background"]["schedule"]
        return {n: rates[hold % len(rates)] for n, rates in sched.items()}

    def job_argv(self, job):
        return [self.chorus, "data-job", "--from", self.store(job["from"])["endpoint"], "--input",
                "%dB" % job["input_bytes"], "--cpu", "%dms" % job["cpu_ms"], "--to",
                self.store(job["to"])["endpoint"], "--output", "%dB" % job["output_bytes"],
                "--timeout", "30s", "--json"]

    def run_job(self, node, job):
        """One data-job on one node (its namespace and cgroup); the job's JSON line."""
        r = netbed("run-in", "--prefix", self.prefix, node["name"], *self.job_argv(job),
                   check=False)
        if r.returncode != 0:
            raise RuntimeError("data-job on %s failed (%d): %s" % (node["name"], r.returncode,
                                                                 r.stderr.strip()))
        return json.loads(r.stdout)


def make_jobs(seed, count):
    """Seeded evaluation jobs, 0.2-20 s on this bed: input 0.5-8 MB (log-uniform), CPU
    20-1000 ms (log-uniform), output 0-4 MB, from/to s0 or s1."""
    rng = random.Random(seed)
    jobs = []
    for i in range(count):
        jobs.append({
            "id": "j%d" % i,
            "input_bytes": int(10 ** rng.uniform(5.7, 6.9)),
            "cpu_ms": int(10 ** rng.uniform(1.3, 3.0)),
            "output_bytes": int(rng.choice([0, 0, 1, 2, 4]) * rng.uniform(0.2, 1.0) * 1e6),
            "from": rng.choice(["s0", "s0", "s1"]),
            "to": rng.choice(["s0", "s1"]),
        })
    return jobs


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def percentile(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)
