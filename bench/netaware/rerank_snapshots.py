#!/usr/bin/env python3
"""Offline re-ranking: the model's and the analytic estimate's argmin over the same journaled
snapshots (every candidate's features of every decision of one policy's runs), scored against
the ground truth; separates "the model ranks worse" from "its run saw other conditions".

    python3 bench/netaware/rerank_snapshots.py RESULT.json STATE_DIR build/bin/chorus MODEL.json LABEL

RESULT.json: a drive_policies.py --mode top1 result whose runs were journaled in STATE_DIR
(--state); LABEL: one of its policies. The model is evaluated here in Python (doubles), not by
TreeModel: approximate at split thresholds; it prints how many live picks it reproduces.
"""
import json, math, os, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ground_truth import score
res = json.load(open(sys.argv[1])); state = sys.argv[2]; chorus = sys.argv[3]; model = json.load(open(sys.argv[4])); label = sys.argv[5]
gt = json.load(open(res["ground_truth"]))
rows = {(r["seed"], r["phase"], r["job"]["id"]): r for r in gt["rows"]}
names = model["features"]
def walk(t, x):
    while "leaf" not in t:
        v = x[t["split"]]
        nxt = t["missing"] if v is None or (isinstance(v, float) and math.isnan(v)) else (t["yes"] if v < t["split_condition"] else t["no"])
        t = next(c for c in t["children"] if c["nodeid"] == nxt)
    return t["leaf"]
def predict(x):
    m = model["base_score"] + sum(walk(t, x) for t in model["trees"])
    return math.exp(m) if model["target"] == "log_seconds" else m
lst = subprocess.run([chorus, "list", "--state", state], capture_output=True, text=True).stdout.splitlines()[1:]
by_work = {l.split()[-1].rsplit("/", 1)[0]: l.split()[0] for l in lst}
pm, pa, rr, live = [], [], [], []
for run in res["runs"][label]:
    rid = by_work[run["work"]]
    for p in run["picks"]:
        d = json.loads(subprocess.run([chorus, "why", "--state", state, rid, p["job"], "--json"], capture_output=True, text=True).stdout)
        cands = d["candidates"]
        pm.append(min(cands, key=lambda c: predict(c["features"]))["node"])
        pa.append(min(cands, key=lambda c: c["features"]["analytic_s"] if c["features"]["analytic_s"] is not None else 1e9)["node"])
        rr.append(rows[(run["seed"], run["phase"], p["job"])]); live.append(p["node"])
for name, picks in (("model argmin", pm), ("analytic argmin", pa)):
    s = score(picks, rr)
    print("%s on %s's snapshots: tolerant %.0f%% strict %.0f%% regret mean %.1f%% p90 %.1f%%" % (
        name, label, 100*s["top1_tolerant"], 100*s["top1_strict"], 100*s["regret_mean"], 100*s["regret_p90"]))
print("agreement with the live picks: model argmin %d/%d, analytic argmin %d/%d" % (
    sum(a == b for a, b in zip(pm, live)), len(live), sum(a == b for a, b in zip(pa, live)), len(live)))
