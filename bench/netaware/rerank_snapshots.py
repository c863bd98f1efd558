#!/usr/bin/env python3
"""Offline re-ranking: several estimators' argmin over the same journaled snapshots (every
candidate's features of every decision of one policy's runs), scored against the ground truth;
separates "this estimate ranks worse" from "its run saw other conditions".

    python3 bench/netaware/rerank_snapshots.py RESULT.json --state DIR [--chorus build/bin/chorus]
        [--label network-aware] [--model MODEL.json] [--dump FILE.json | --from-dump FILE.json]
        [--floors 0.1,0.3]

RESULT.json: a drive_policies.py --mode top1 result whose runs were journaled in --state; --label:
one of its policies (default: every policy with journaled candidates). --dump writes the
snapshots (every decision's candidates, the ground-truth row, the previous job's node) so a later
call with --from-dump needs neither the journal nor the binary.

Estimators, each from the journaled features alone:
- `journaled`: the build's own `analytic_s` (what the policy ranked by, without a model);
- `additive`: bytes / bandwidth + RTT x (2 + slow-start rounds to cover the bytes) + CPU / share,
  the analytic estimate before 2026-12-04;
- `bandwidth only`: bytes / bandwidth + CPU / share;
- `current`: the analytic estimate of 2026-12-04 (features.cpp) recomputed here, and its
  ablations, each without one of its three terms: `- capacity cap` (the probe alone as the
  rate), `- tcp rtt` (slow start ramps at the PING's round trip), `- cfs` (CPU / share);
  they need snapshots with the features of 2026-12-04 (rx_cap_mbps, tcp_rtt_from_ms, ...);
  `floor X` (--floors): `current` with the capacity cap floored at X of the link, not 5%;
- `model`: --model evaluated in Python (doubles; approximate at split thresholds); a log_ratio
  model multiplies the candidate's journaled analytic_s.
"""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ground_truth import score  # noqa: E402

SEGMENT = 1448.0
INITIAL_WINDOW = 10 * SEGMENT


def additive_s(nbytes, bw, rtt):
    rounds = 2.0 + math.ceil(math.log2(nbytes / INITIAL_WINDOW + 1.0))
    return nbytes / bw + (0 if rtt is None else rtt * rounds)


def tcp_s(nbytes, bw, rtt, tcp_rtt):
    """Mirror of transfer_s in schedulers/netaware/features.cpp (rtt, tcp_rtt in seconds)."""
    if rtt is None:
        return nbytes / bw
    ramp = rtt if tcp_rtt is None else min(tcp_rtt, rtt)
    t, sent, window, bdp = ramp + rtt, 0.0, INITIAL_WINDOW, bw * ramp
    while nbytes - sent > window and window < bdp:
        t += ramp
        sent += window
        window *= 2
    return t + (nbytes - sent) / bw


def current(cap=True, tcp=True, cfs=True, floor=0.05):
    """Mirror of analytic_estimate_s of 2026-12-04, with terms switched off for ablations."""
    def estimate(f):
        cpu, share = f["cpu_s"], f["cpu_share"]
        if cfs and share < 1:
            free = min(cpu, share * 0.1)
            t = free + (cpu - free) / share
        else:
            t = cpu / share
        for mb, mbps, rtt_ms, tcp_ms, cap_mbps, rate in (
                (f["input_mb"], f["down_mbps"], f["rtt_from_ms"], f.get("tcp_rtt_from_ms"),
                 f.get("rx_cap_mbps"), f["rx_mbps"]),
                (f["output_mb"], f["up_mbps"], f["rtt_to_ms"], f.get("tcp_rtt_to_ms"),
                 f.get("tx_cap_mbps"), f["tx_mbps"])):
            if not mb or mb <= 0:
                continue
            if not mbps or mbps <= 0:
                return None
            bw = mbps
            if cap and cap_mbps and cap_mbps > 0 and rate is not None:
                bw = min(mbps, max(cap_mbps - rate, floor * cap_mbps))
            t += tcp_s(mb * 1e6, bw * 1e6 / 8, None if rtt_ms is None else rtt_ms / 1e3,
                       None if (not tcp or tcp_ms is None) else tcp_ms / 1e3)
        return t
    return estimate


def by_formula(transfer):
    def estimate(f):
        t = f["cpu_s"] / f["cpu_share"]
        for mb, mbps, rtt_ms in ((f["input_mb"], f["down_mbps"], f["rtt_from_ms"]),
                                 (f["output_mb"], f["up_mbps"], f["rtt_to_ms"])):
            if mb and mb > 0:
                if not mbps or mbps <= 0:
                    return None
                rtt = None if rtt_ms is None else rtt_ms / 1e3
                t += transfer(mb * 1e6, mbps * 1e6 / 8, rtt)
        return t
    return estimate


def model_estimator(model):
    def walk(t, x):
        while "leaf" not in t:
            v = x[t["split"]]
            nxt = t["missing"] if v is None or (isinstance(v, float) and math.isnan(v)) else (
                t["yes"] if v < t["split_condition"] else t["no"])
            t = next(c for c in t["children"] if c["nodeid"] == nxt)
        return t["leaf"]

    def predict(x):
        m = model["base_score"] + sum(walk(t, x) for t in model["trees"])
        if model["target"] == "log_ratio":  # the analytic estimate corrected
            a = x.get("analytic_s")
            return math.exp(m) * a if a is not None and a > 0 else None
        return math.exp(m) if model["target"] == "log_seconds" else m
    return predict


def collect(res, state, chorus, labels):
    gt = json.load(open(res["ground_truth"]))
    rows = {(r["seed"], r["phase"], r["job"]["id"]): r for r in gt["rows"]}
    lst = subprocess.run([chorus, "list", "--state", state], capture_output=True,
                         text=True).stdout.splitlines()[1:]
    by_work = {line.split()[-1].rsplit("/", 1)[0]: line.split()[0] for line in lst}
    out = []
    for label in labels:
        for run in res["runs"][label]:
            rid = by_work.get(run["work"])
            if rid is None:
                continue
            prev = None
            for p in run["picks"]:
                why = subprocess.run([chorus, "why", "--state", state, rid, p["job"], "--json"],
                                     capture_output=True, text=True)
                if why.returncode != 0:
                    break
                d = json.loads(why.stdout)
                out.append({"label": label, "seed": run["seed"], "phase": run["phase"],
                            "job": p["job"], "live": p["node"], "previous_node": prev,
                            "candidates": [{"node": c["node"], "features": c["features"]}
                                           for c in d["candidates"]],
                            "row": rows[(run["seed"], run["phase"], p["job"])]})
                prev = p["node"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("result", nargs="?")
    ap.add_argument("--state")
    ap.add_argument("--chorus", default="build/bin/chorus")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--model")
    ap.add_argument("--dump")
    ap.add_argument("--from-dump")
    ap.add_argument("--floors", default="",
                    help="more `current` estimators with the capacity cap's floor at these "
                         "fractions of the link (comma-separated; the policy's: 0.05)")
    a = ap.parse_args()
    if a.from_dump:
        snaps = json.load(open(a.from_dump))
    else:
        if not (a.result and a.state):
            raise SystemExit("needs RESULT.json and --state DIR, or --from-dump FILE")
        res = json.load(open(a.result))
        snaps = collect(res, a.state, a.chorus, a.label or list(res["runs"]))
        if a.dump:
            json.dump(snaps, open(a.dump, "w"))
    estimators = [("journaled", lambda f: f["analytic_s"]), ("additive", by_formula(additive_s)),
                  ("bandwidth only", by_formula(lambda b, bw, rtt: b / bw))]
    if any("rx_cap_mbps" in c["features"] for x in snaps for c in x["candidates"]):
        estimators += [("current", current()), ("- capacity cap", current(cap=False)),
                       ("- tcp rtt", current(tcp=False)), ("- cfs", current(cfs=False))]
        estimators += [("floor %s" % f, current(floor=float(f))) for f in a.floors.split(",") if f]
    if a.model:
        estimators.append(("model", model_estimator(json.load(open(a.model)))))
    for label in sorted({s["label"] for s in snaps}):
        mine = [s for s in snaps if s["label"] == label]
        rows = [s["row"] for s in mine]
        print("%s: %d decisions" % (label, len(mine)))
        s = score([x["live"] for x in mine], rows)
        print("  %-16s tolerant %3.0f%% strict %3.0f%% regret mean %5.1f%% p90 %5.1f%%" % (
            "live picks", 100 * s["top1_tolerant"], 100 * s["top1_strict"],
            100 * s["regret_mean"], 100 * s["regret_p90"]))
        for name, est in estimators:
            picks, errors = [], []
            for x in mine:
                scored = [(est(c["features"]), c["node"]) for c in x["candidates"]]
                scored = [v for v in scored if v[0] is not None and not math.isnan(v[0])]
                picks.append(min(scored)[1] if scored else None)
                truth = x["row"]["median_s"]  # every candidate's own median time there
                errors += [abs(math.log(v / truth[n])) for v, n in scored
                           if v > 0 and truth.get(n, 0) > 0]
            s = score(picks, rows)
            print("  %-16s tolerant %3.0f%% strict %3.0f%% regret mean %5.1f%% p90 %5.1f%%"
                  "  mean |log error| %.2f" % (
                      name, 100 * s["top1_tolerant"], 100 * s["top1_strict"],
                      100 * s["regret_mean"], 100 * s["regret_p90"],
                      sum(errors) / len(errors) if errors else float("nan")))


if __name__ == "__main__":
    main()
