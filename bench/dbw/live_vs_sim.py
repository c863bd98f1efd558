#!/usr/bin/env python3
"""Live quorum training beside the round simulator's prediction (issue 15: within +-10%).

For each scenario (S1, S2 by default) and policy (wait-all, static:b=2, and dbw+ when the build
registers it) and seed, it runs the live training of examples/quorum-training through `chorus run`
(a parameter server service, n worker replicas, CURVE sockets; the workers add the scenario's
trace delays to their real gradients) and reads the PS's result.json: time to the target loss
and the measured per-round overhead (the close-to-broadcast gap plus the median of what each
used arrival took beyond its trace delay: compute, transport). Then `chorus simulate-quorum`
runs the same workload, scenario, seeds, policy and target with that overhead (the median over
the live runs of that row), and the script reports the medians side by side and live / sim.

The compute is kept small (logistic d 100, batch 32: ~0.1 ms) so the trace delays dominate on
this 2-core machine with n = 8 workers. Python 3 standard library only.

    cmake --build build --target chorus_cli quorum_ps quorum_worker
    bench/dbw/live_vs_sim.py [--seeds 3] [--scenarios S1,S2] [--n 8] [--curvature]

--curvature: the workers send the curvature probe (quorum_ps --curvature-probe 1) and the
simulator feeds its own (simulate-quorum --curvature), so dbw/dbw+ read L from it on both sides.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import RESULTS_DIR, timed, write_result  # noqa: E402

YAML = """name: live-vs-sim
services:
  - name: ps
    command: [{ps}, serve, --state, ps-state, --port, "{{port}}", --n, "{n}", --policy, "{policy}",
              {options} --workload, logistic, --dim, "{dim}", --samples, "{samples}",
              --data-seed, "1", --batch, "{batch}", --lr, "{lr}", --target-loss, "{target}",
              --max-rounds, "{max_rounds}", --scenario, {scenario}, --base-s, "{base}",
              --tail-s, "{tail}", --seed, "{seed}", --mode, {mode}]
    cores: 1
    ready: {{tcp: {port}, timeout: 30s}}
  - name: worker
    command: [{worker}, --state, ps-state, --id, "{{replica}}"]
    replicas: {n}
    cores: 1
    ready: {{stdout: "^worker \\\\d+ connecting", timeout: 60s}}
tasks:
  - name: train
    uses: [ps, worker]
    command: [{ps}, wait, --state, ps-state, --timeout, "600"]
"""


def policy_args(spec):
    """'static:b=2' -> ('static', '--option, b=2,')."""
    name, _, opts = spec.partition(":")
    options = "".join(f"--option, {o}, " for o in opts.split(",") if o)
    return name, options


def live_run(args, scenario, spec, seed, target, port):
    name, options = policy_args(spec)
    if args.curvature:
        options += ' --curvature-probe, "1",'
    qt = os.path.join(args.build, "examples", "quorum-training")
    with tempfile.TemporaryDirectory(prefix="chorus-live-vs-sim-") as d:
        with open(os.path.join(d, "wf.yaml"), "w") as f:
            f.write(YAML.format(ps=os.path.join(qt, "quorum_ps"),
                                worker=os.path.join(qt, "quorum_worker"), n=args.n, policy=name,
                                options=options, dim=args.dim, samples=args.samples,
                                batch=args.batch, lr=args.lr, target=target,
                                max_rounds=args.max_rounds, scenario=scenario, base=args.base,
                                tail=args.tail, seed=seed, mode=args.mode, port=port))
        timed([os.path.join(args.build, "bin", "chorus"), "run", "--cores", str(args.n + 2),
               "wf.yaml"], cwd=d)
        with open(os.path.join(d, "ps-state", "result.json")) as f:
            r = json.load(f)
    return {
        "seed": seed,
        "reached": r["reached_target"],
        "time_to_target_s": r["time_to_target_s"],
        "rounds": r["rounds"],
        "median_k": r["median_k"],
        "median_curvature": r.get("median_curvature"),
        "overhead_s": r["median_gap_s"] + r["median_arrival_overhead_s"],
        "median_gap_s": r["median_gap_s"],
        "median_arrival_overhead_s": r["median_arrival_overhead_s"],
        "median_compute_s": r["median_compute_s"],
        "late_dropped": r["late_dropped"],
    }


def simulate(args, scenario, spec, target, overhead):
    cmd = [os.path.join(args.build, "bin", "chorus"), "simulate-quorum", "--workload", "logistic",
           "--dim", str(args.dim), "--samples", str(args.samples), "--data-seed", "1",
           "--scenario", scenario, "--base", str(args.base), "--tail", str(args.tail),
           "--n", str(args.n), "--batch", str(args.batch), "--lr", str(args.lr),
           "--mode", args.mode, "--overhead", f"{overhead:.6f}", "--compare", spec,
           "--seeds", str(args.seeds), "--seed", str(args.first_seed),
           "--max-iterations", str(args.max_rounds), "--json"]
    if target is not None:
        cmd += ["--target-loss", str(target)]
    if args.curvature:
        cmd.append("--curvature")
    _, proc = timed(cmd)
    return json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scenarios", default="S1,S2")
    ap.add_argument("--policies", default="wait-all,static:b=2,dbw+")
    ap.add_argument("--seeds", type=int, default=9)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--dim", type=int, default=100)
    ap.add_argument("--samples", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--base", type=float, default=0.02)
    ap.add_argument("--tail", type=float, default=0.02)
    ap.add_argument("--mode", default="interrupt")
    ap.add_argument("--max-rounds", type=int, default=600)
    ap.add_argument("--target-fraction", type=float, default=0.1,
                    help="target = F* + fraction (F(w0) - F*), as the simulator computes it")
    ap.add_argument("--curvature", action="store_true",
                    help="the curvature probe on, live and simulated")
    ap.add_argument("--name", default="dbw/live_vs_sim")
    args = ap.parse_args()

    # Which policies this build has (dbw+ only once the policy helper's work is merged).
    probe = subprocess.run([os.path.join(args.build, "bin", "chorus"), "simulate-quorum",
                            "--compare", "dbw+", "--max-iterations", "1", "--json"],
                           capture_output=True, text=True)
    policies = [p for p in args.policies.split(",") if p != "dbw+" or probe.returncode == 0]

    rows, raw = [], []
    port = 25900
    for scenario in args.scenarios.split(","):
        # The target: from the simulator's F* for this workload (the same for every policy).
        head = simulate(args, scenario, "wait-all", None, 0.0)
        initial, optimum = head["initial_loss"], head["optimum_loss"]
        target = optimum + args.target_fraction * (initial - optimum)
        for spec in policies:
            live = []
            for s in range(args.first_seed, args.first_seed + args.seeds):
                port += 1
                live.append(live_run(args, scenario, spec, s, target, port))
                print(f"{scenario} {spec} seed {s}: live {live[-1]['time_to_target_s']} s, "
                      f"{live[-1]['rounds']} rounds, overhead {live[-1]['overhead_s']*1e3:.2f} ms",
                      flush=True)
            overhead = statistics.median(r["overhead_s"] for r in live)
            sim = simulate(args, scenario, spec, target, overhead)["policies"][0]
            live_times = [r["time_to_target_s"] for r in live if r["reached"]]
            live_med = statistics.median(live_times) if len(live_times) == len(live) else None
            sim_med = sim["median_time_s"]
            ratio = live_med / sim_med if live_med and sim_med else None
            row = {"scenario": scenario, "policy": spec, "target_loss": target,
                   "overhead_s": overhead, "live_median_s": live_med, "sim_median_s": sim_med,
                   "live_rounds": statistics.median(r["rounds"] for r in live),
                   "sim_rounds": sim["median_rounds"], "ratio": ratio,
                   "within_10pct": ratio is not None and abs(ratio - 1) <= 0.10,
                   "live_times_s": [r["time_to_target_s"] for r in live],
                   "sim_times_s": sim["times_s"]}
            rows.append(row)
            raw.append({"scenario": scenario, "policy": spec, "live": live, "sim": sim})
            print(json.dumps(row), flush=True)

    lines = [f"n {args.n}, logistic d {args.dim} N {args.samples}, batch {args.batch}, lr "
             f"{args.lr}, base {args.base}s tail {args.tail}s, {args.mode} mode, "
             f"{args.seeds} seeds (medians); target F* + {args.target_fraction} (F(w0) - F*)",
             "",
             "| scenario | policy | live (s) | sim (s) | live / sim | rounds live / sim | "
             "overhead (ms) | within 10% |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fmt = (lambda v: f"{v:.3f}" if isinstance(v, (int, float)) else "not reached")
        lines.append(f"| {r['scenario']} | {r['policy']} | {fmt(r['live_median_s'])} | "
                     f"{fmt(r['sim_median_s'])} | {fmt(r['ratio'])} | "
                     f"{r['live_rounds']:.0f} / {r['sim_rounds']:.0f} | "
                     f"{r['overhead_s'] * 1e3:.2f} | {'yes' if r['within_10pct'] else 'NO'} |")
    os.makedirs(os.path.dirname(os.path.join(RESULTS_DIR, args.name)), exist_ok=True)
    write_result(args.name, {"args": vars(args), "rows": rows, "runs": raw}, "\n".join(lines),
                 block=args.name.replace("/", "_"))


if __name__ == "__main__":
    main()
