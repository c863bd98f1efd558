#!/usr/bin/env python3
"""Placement policies side by side on the real test bed, scored against the ground truth.

    sudo bench/netaware/drive_policies.py --build build \\
        --ground-truth bench/results/netaware_ground_truth.json \\
        --policies first-fit,random,kube-default,network-cost,network-aware \\
        [--policy 'network-aware-model={placement: network-aware, model: model.json}']

For every stationary phase (seed, period) of the ground truth and every policy: the bed's
background is held at that phase (as when the ground truth was measured), `chorus run --agents 4`
runs in the hub's namespace, one `chorus agent` per node namespace (in the node's cgroup, so a
slow node's quota applies to its tasks) connects to it over the node's shaped link, and the
workflow runs the phase's evaluation jobs one after another (each task `after:` the previous,
behind a warm-up task that lets telemetry arrive), so every decision sees all four nodes idle
and only the background differs — the ground truth's conditions. Each task records the node it
ran on ($CHORUS_NODE) and its data-job's times. The pick is scored against the ground truth row
of the same (seed, period, job): top-1 tolerant (within 5% of the best median) and strict,
regret = chosen node's ground-truth median / best - 1 (mean, p90).

Writes bench/results/<--name>.json/.md and the README block. `--no-data` leaves the `data:` and
`sources:` sections out (for a build whose workflow reader does not know them yet: only the
resource policies can run then).
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import bedlib  # noqa: E402
from ground_truth import score  # noqa: E402


def workflow_text(bed, name, scheduler_yaml, jobs, with_data, warmup_s, outdir):
    lines = ["name: %s" % name, "scheduler: %s" % scheduler_yaml]
    if with_data:
        lines.append("sources:")
        for s in bed.desc["stores"]:
            lines.append("  %s: {address: '%s'}" % (s["name"], s["endpoint"]))
    lines.append("tasks:")
    lines.append("  - name: warmup\n    command: 'sleep %g'" % warmup_s)
    prev = "warmup"
    for job in jobs:
        argv = " ".join(bed.job_argv(job))
        cmd = "echo $CHORUS_NODE > %s/%s.node && %s > %s/%s.json" % (
            outdir, job["id"], argv, outdir, job["id"])
        lines.append("  - name: %s" % job["id"])
        lines.append("    command: \"%s\"" % cmd.replace("\"", "\\\""))
        lines.append("    after: [%s]" % prev)
        if with_data:
            lines.append("    data: {input: %dB, from: %s, output: %dB, to: %s, cpu: %dms}" % (
                job["input_bytes"], job["from"], job["output_bytes"], job["to"], job["cpu_ms"]))
        prev = job["id"]
    return "\n".join(lines) + "\n"


CLOCK_CHAINS = 16


def stream_workflow_text(bed, name, scheduler_yaml, jobs, arrivals, with_data, warmup_s, outdir):
    """The live stream: job k becomes ready at arrivals[k] seconds after the stream starts. A
    clock task per job (`c<k>`, in 16 chains, sleeps until its absolute arrival time, then
    writes it) runs on a clock agent in the hub namespace: clock tasks need 2 cores, which only the clock agent
    offers (the bed's agents offer 1; 2 is what the workflow check allows on this 2-core
    machine), and jobs need 100 MB of memory, which the clock agent (1 MB) lacks, so neither
    ever takes the other's place. Job k runs `after: [c<k>]`: placement sees it when it arrives."""
    lines = ["name: %s" % name, "scheduler: %s" % scheduler_yaml]
    if with_data:
        lines.append("sources:")
        for s in bed.desc["stores"]:
            lines.append("  %s: {address: '%s'}" % (s["name"], s["endpoint"]))
    lines.append("tasks:")
    lines.append("  - name: start\n    command: 'sleep %g; date +%%s.%%N > %s/t0'\n    cores: 2"
                 % (warmup_s, outdir))
    lead = 1.0  # the first clocks are spawned before the first arrival
    for k, (job, at) in enumerate(zip(jobs, arrivals)):
        at += lead
        clock = "c%d" % k
        # CLOCK_CHAINS chains of clocks, each clock sleeping to its own absolute time: a single
        # chain would add a dispatch round trip (~0.5 s) per arrival, and 200 clocks at once
        # wedged the clock agent (agent and coordinator each saw the other silent for 10 s).
        wait = ("sleep $(awk -v t0=$(cat %s/t0) -v a=%.3f -v now=$(date +%%s.%%N) "
                "'BEGIN {{ d = t0 + a - now; print (d > 0 ? d : 0) }}')" % (outdir, at))
        lines.append("  - name: %s" % clock)
        lines.append("    command: \"%s && date +%%s.%%N > %s/%s.t\"" % (wait, outdir, job["id"]))
        lines.append("    after: [%s]\n    cores: 2" % ("start" if k < CLOCK_CHAINS
                                                       else "c%d" % (k - CLOCK_CHAINS)))
        argv = " ".join(bed.job_argv(job))
        cmd = "echo $CHORUS_NODE > %s/%s.node && %s > %s/%s.json && date +%%s.%%N > %s/%s.end" % (
            outdir, job["id"], argv, outdir, job["id"], outdir, job["id"])
        lines.append("  - name: %s" % job["id"])
        lines.append("    command: \"%s\"" % cmd.replace("\"", "\\\""))
        lines.append("    after: [%s]\n    memory: 100M" % clock)
        if with_data:
            lines.append("    data: {input: %dB, from: %s, output: %dB, to: %s, cpu: %dms}" % (
                job["input_bytes"], job["from"], job["output_bytes"], job["to"], job["cpu_ms"]))
    return "\n".join(lines) + "\n"


STATE_DIR = None  # --state: one journal for every run (for `chorus model train RUN...`)


def run_policy(bed, label, scheduler_yaml, jobs, with_data, warmup_s, timeout_s, arrivals=None):
    """One `chorus run --agents N` of `jobs` in the hub with agents in the nodes; the node each
    job ran on and its data-job result."""
    work = tempfile.mkdtemp(prefix="netaware-%s-" % re.sub(r"[^a-z0-9]", "", label.lower()))
    out = os.path.join(work, "out")
    os.makedirs(out)
    wf = os.path.join(work, "wf.yaml")
    with open(wf, "w") as f:
        if arrivals is None:
            f.write(workflow_text(bed, "netaware-" + label, scheduler_yaml, jobs, with_data,
                                  warmup_s, out))
        else:
            f.write(stream_workflow_text(bed, "netaware-stream-" + label, scheduler_yaml, jobs,
                                         arrivals, with_data, warmup_s, out))
    hub = bed.desc["hub"]
    err = open(os.path.join(work, "coordinator.err"), "w")
    clock = arrivals is not None
    coord = subprocess.Popen(["ip", "netns", "exec", hub["ns"], bed.chorus, "run", wf, "--agents",
                              str(len(bed.nodes) + clock), "--listen",
                              "tcp://%s:*" % hub["address"],
                              "--agent-wait", "30s"] + (["--state", STATE_DIR] if STATE_DIR else []),
                             cwd=work, stdout=subprocess.DEVNULL, stderr=err)
    agents = []
    try:
        endpoint = keys = None
        deadline = time.time() + 30
        while time.time() < deadline and endpoint is None:
            m = re.search(r"--connect (tcp://\S+) --keys (\S+)",
                          open(os.path.join(work, "coordinator.err")).read())
            if m:
                endpoint, keys = m.group(1), m.group(2)
            elif coord.poll() is not None:
                break
            time.sleep(0.1)
        if endpoint is None:
            raise RuntimeError("%s: the coordinator did not invite agents:\n%s" % (
                label, open(os.path.join(work, "coordinator.err")).read()[-2000:]))
        if clock:
            log = open(os.path.join(work, "agent-clock.err"), "w")
            agents.append(subprocess.Popen(
                ["ip", "netns", "exec", hub["ns"], bed.chorus, "agent", "--connect", endpoint,
                 "--keys", keys, "--node", "clock", "--cores", str(2 * CLOCK_CHAINS + 2), "--memory",
                 "1"], cwd=work, stdout=subprocess.DEVNULL, stderr=log))
        for n in bed.nodes:
            log = open(os.path.join(work, "agent-%s.err" % n["name"]), "w")
            agents.append(subprocess.Popen(
                [sys.executable, bedlib.NETBED, "run-in", "--prefix", bed.prefix, n["name"],
                 bed.chorus, "agent", "--connect", endpoint, "--keys", keys, "--node", n["name"],
                 "--cores", "1"], cwd=work, stdout=subprocess.DEVNULL, stderr=log))
            # One at a time, so the coordinator lists the nodes as the bed does (n0 first):
            # first-fit's "first" is then the same node in every run.
            time.sleep(0.5)
        code = coord.wait(timeout=timeout_s)
        if code != 0:
            raise RuntimeError("%s: chorus run exited %d:\n%s" % (
                label, code, open(os.path.join(work, "coordinator.err")).read()[-2000:]))
    finally:
        if coord.poll() is None:
            coord.terminate()
            coord.wait()
        for a in agents:
            try:
                a.wait(timeout=15)
            except subprocess.TimeoutExpired:
                a.terminate()
                a.wait()
    picks = []
    for job in jobs:
        node = open(os.path.join(out, job["id"] + ".node")).read().strip()
        result = json.load(open(os.path.join(out, job["id"] + ".json")))
        pick = {"job": job["id"], "node": node, "total_s": result["total_s"]}
        if arrivals is not None:
            arrived = float(open(os.path.join(out, job["id"] + ".t")).read())
            pick["completion_s"] = float(open(os.path.join(out, job["id"] + ".end")).read()) - arrived
            # Arrival to the job's first command (the .node file's write): the decision, the
            # dispatch to the node's agent and its spawn, the part no placement shortens.
            pick["start_s"] = os.stat(os.path.join(out, job["id"] + ".node")).st_mtime_ns / 1e9 - arrived
        picks.append(pick)
    return {"work": work, "picks": picks}


def network_cost_yaml(nodes, stores):
    """The static baseline's declared topology, from what an operator knows of this bed: a zone
    per nominal link rate, the stores in one zone, cost = 200 Mbit / the zone's rate."""
    zones = {n["name"]: "z%g" % n["rate_mbit"] for n in nodes}
    zones.update({s["name"]: "stores" for s in stores})
    costs = {"z%g-stores" % n["rate_mbit"]: round(200.0 / n["rate_mbit"], 3) for n in nodes}
    return "{placement: network-cost, topology: {zones: {%s}, costs: {%s}}}" % (
        ", ".join("%s: %s" % kv for kv in zones.items()),
        ", ".join("%s: %g" % kv for kv in costs.items()))


def parse_policies(a, nodes, stores):
    pols = []
    for p in (x for x in a.policies.split(",") if x):
        pols.append((p, network_cost_yaml(nodes, stores) if p == "network-cost"
                     else "{placement: %s}" % p))
    for spec in a.policy:
        label, _, yaml = spec.partition("=")
        if not yaml:
            raise SystemExit("--policy needs LABEL=YAML, e.g. 'na-model={placement: network-aware, "
                             "model: m.json}'")
        pols.append((label, yaml))
    return pols


def run_stream(bed, a, pols):
    """The same arrivals, jobs and background (the schedule of --stream-seed, restarted at
    period 0) under each policy; completion = job end - arrival."""
    rng = random.Random(a.stream_seed)
    arrivals, t = [], 0.0
    for _ in range(a.stream_jobs):
        arrivals.append(round(t, 3))
        t += rng.expovariate(1.0 / a.stream_gap)
    jobs = bedlib.make_jobs(a.stream_seed, a.stream_jobs)
    out = {}
    for label, yaml in pols:
        bed.background(a.stream_seed, settle=0)  # period 0 starts now, for every policy
        r = run_policy(bed, label, yaml, jobs, not a.no_data, a.warmup, timeout_s=3600,
                       arrivals=arrivals)
        comp = [p["completion_s"] for p in r["picks"]]
        nodes = {}
        for p in r["picks"]:
            nodes[p["node"]] = nodes.get(p["node"], 0) + 1
        out[label] = {"mean_completion_s": sum(comp) / len(comp),
                      "p90_completion_s": bedlib.percentile(comp, 0.9), "nodes": nodes,
                      "picks": r["picks"], "work": r["work"]}
        print("stream %s: mean %.2f s, nodes %s" % (label, out[label]["mean_completion_s"], nodes),
              file=sys.stderr, flush=True)
    bed.background(a.stream_seed, off=True, settle=0)
    return out


def train_runs(a):
    """Training data: the phases of schedules no evaluation uses (--train-seeds, disjoint from
    the ground truth's), each under each policy (random explores every node), journaled in
    --state. Prints the run ids for `chorus model train --state DIR RUN... -o model.json`."""
    if not STATE_DIR:
        raise SystemExit("--mode train needs --state DIR (the journal the model learns from)")
    gt_seeds = set()
    if os.path.exists(a.ground_truth):
        gt_seeds = set(json.load(open(a.ground_truth))["config"]["seeds"])
    seeds = [int(x) for x in a.train_seeds.split(",")]
    if gt_seeds & set(seeds):
        raise SystemExit("--train-seeds %s overlap the ground truth's seeds %s: the sets must "
                         "not share a schedule" % (sorted(set(seeds) & gt_seeds), sorted(gt_seeds)))
    pols = parse_policies(a, [{"name": "n%d" % i, "rate_mbit": float(r)} for i, r in
                              enumerate(bedlib.DEFAULT_NODES.split(","))],
                          [{"name": "s0"}, {"name": "s1"}])
    with bedlib.Bed(a.build, a.prefix, period=a.stream_period) as bed:
        for seed in seeds:
            for phase in range(max(1, a.phases or 2)):
                bed.background(seed, hold=phase)
                jobs = bedlib.make_jobs(seed * 100 + phase, 8)
                for label, yaml in pols:
                    if yaml == "{placement: random}":
                        yaml = "{placement: random, seed: %d}" % (seed * 100 + phase)
                    r = run_policy(bed, label, yaml, jobs, True, a.warmup, timeout_s=600)
                    print("seed %d phase %d %s: %s" % (seed, phase, label, r["work"]),
                          file=sys.stderr, flush=True)
    runs = subprocess.run([os.path.join(os.path.abspath(a.build), "bin", "chorus"), "list",
                           "--state", STATE_DIR], capture_output=True, text=True)
    print(runs.stdout)


def per_node(path):
    """A stream result's jobs per node: count, mean completion (arrival to end), mean job time."""
    res = json.load(open(path))
    for label, st in res["stream"].items():
        by = {}
        for p in st["picks"]:
            by.setdefault(p["node"], []).append(p)
        print("%s: %s" % (label, "  ".join(
            "%s %d jobs, completion %.2f s, job %.2f s%s" % (
                n, len(v), sum(p["completion_s"] for p in v) / len(v),
                sum(p["total_s"] for p in v) / len(v),
                ", started after %.3f s (median)" % bedlib.median([p["start_s"] for p in v])
                if all("start_s" in p for p in v) else "")
            for n, v in sorted(by.items()))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ground-truth", default=os.path.join(benchlib.RESULTS_DIR,
                                                           "netaware_ground_truth.json"))
    ap.add_argument("--policies", default="first-fit,kube-default")
    ap.add_argument("--policy", action="append", default=[], help="LABEL=scheduler YAML")
    ap.add_argument("--no-data", action="store_true")
    ap.add_argument("--warmup", type=float, default=8.0,
                    help="seconds before the first job (telemetry: RTTs, a first bandwidth probe)")
    ap.add_argument("--phases", type=int, default=0, help="only the first N phases (0: all)")
    ap.add_argument("--prefix", default="dp%d" % (os.getpid() % 100000))
    ap.add_argument("--name", default="netaware")
    ap.add_argument("--mode", choices=["top1", "stream", "both", "train"], default="top1",
                    help="train: run --train-seeds' phases under each policy, no scoring, into "
                    "--state (the runs `chorus model train` learns from)")
    ap.add_argument("--train-seeds", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--state", help="one state folder (journal) for every run")
    ap.add_argument("--stream-jobs", type=int, default=200)
    ap.add_argument("--stream-gap", type=float, default=0.6, help="mean seconds between arrivals")
    ap.add_argument("--stream-seed", type=int, default=201)
    ap.add_argument("--stream-period", type=float, default=20.0,
                    help="background period during the stream (s)")
    ap.add_argument("--per-node", metavar="RESULT.json",
                    help="print a stream result's jobs per node (count, mean times); run nothing")
    a = ap.parse_args()
    if a.per_node:
        return per_node(a.per_node)
    global STATE_DIR
    STATE_DIR = os.path.abspath(a.state) if a.state else None
    if a.mode == "train":
        return train_runs(a)
    gt = json.load(open(a.ground_truth))
    cfg = gt["config"]
    phases = []
    for row in gt["rows"]:
        key = (row["seed"], row["phase"])
        if key not in [p[0] for p in phases]:
            phases.append((key, []))
        next(p for p in phases if p[0] == key)[1].append(row)
    if a.phases:
        phases = phases[: a.phases]
    pols = parse_policies(a, cfg["nodes"], cfg["stores"])
    nodes = ",".join("%g" % n["rate_mbit"] for n in cfg["nodes"])
    cpu = ",".join("%g" % (n["cpu_quota_cores"] or 0) for n in cfg["nodes"])
    delays = ",".join(str(s["delay_ms"]) for s in cfg["stores"])
    levels = ",".join("%g" % x for x in cfg["levels"])
    results = {label: {"picks": [], "rows": []} for label, _ in pols}
    t0 = time.time()
    stream = {}
    with bedlib.Bed(a.build, a.prefix, nodes=nodes, cpu=cpu, store_delay=delays,
                    levels=levels, period=a.stream_period) as bed:
        for (seed, phase), rows in (phases if a.mode != "stream" else []):
            bed.background(seed, hold=phase)
            jobs = [r["job"] for r in rows]
            for label, yaml in pols:
                if yaml == "{placement: random}":
                    # random's choice hashes (seed, task id, node): the same ids in every phase
                    # would repeat one pattern, so each phase gets its own seed.
                    yaml = "{placement: random, seed: %d}" % (seed * 100 + phase)
                r = run_policy(bed, label, yaml, jobs, not a.no_data, a.warmup,
                               timeout_s=600)
                results[label]["picks"] += [p["node"] for p in r["picks"]]
                results[label]["rows"] += rows
                results[label].setdefault("runs", []).append(
                    {"seed": seed, "phase": phase, "picks": r["picks"], "work": r["work"]})
                print("seed %d phase %d %s: %s" % (seed, phase, label,
                                                    " ".join(p["node"] for p in r["picks"])),
                      file=sys.stderr, flush=True)
        if a.mode != "top1":
            stream = run_stream(bed, a, pols)
    lines = ["| policy | top-1 tolerant | top-1 strict | regret mean | regret p90 | rows | "
             "mean job time (this run) |", "|---|---|---|---|---|---|---|"]
    summary = {}
    for label, _ in pols:
        s = score(results[label]["picks"], results[label]["rows"])
        times = [p["total_s"] for run in results[label].get("runs", []) for p in run["picks"]]
        s["mean_job_s"] = sum(times) / max(1, len(times))
        summary[label] = s
        lines.append("| %s | %.0f%% | %.0f%% | %.1f%% | %.1f%% | %d | %.2f s |" % (
            label, 100 * s["top1_tolerant"], 100 * s["top1_strict"], 100 * s["regret_mean"],
            100 * s["regret_p90"], s["rows"], s["mean_job_s"]))
    if a.mode == "stream":
        lines = []
    if stream:
        base = stream.get("kube-default", {}).get("mean_completion_s")
        lines += ["", "| policy (live stream, %d jobs, mean gap %.2f s, seed %d) | mean completion "
                  "| p90 | vs kube-default | on n0/n1/n2/n3 |" % (a.stream_jobs, a.stream_gap,
                                                               a.stream_seed),
                  "|---|---|---|---|---|"]
        for label, st in stream.items():
            lines.append("| %s | %.2f s | %.2f s | %s | %s |" % (
                label, st["mean_completion_s"], st["p90_completion_s"],
                "%+.0f%%" % (100 * (st["mean_completion_s"] / base - 1)) if base else "-",
                "/".join(str(st["nodes"].get(n["name"], 0)) for n in cfg["nodes"])))
    table = "\n".join(lines)
    benchlib.write_result(a.name, {
        "ground_truth": os.path.abspath(a.ground_truth), "policies": dict(pols),
        "summary": summary, "stream": stream, "seconds": time.time() - t0,
        "runs": {k: v.get("runs", []) for k, v in results.items()}}, table)
    print(table)


if __name__ == "__main__":
    main()
