#!/usr/bin/env python3
"""The decision-loop cost of network-aware placement (issue 14: <= 5 us per candidate node,
1,000 nodes in <= 200 us per decision), from build/bench/netaware_sim_cost (sim_cost.cpp).

Runs the program --runs times (each the median of 7 repeats of every figure, in thread CPU time
and wall time), and reports the medians over runs: per candidate (fill_features +
TreeModel::predict_s, 300 trees of depth 6), XGBoost's own prediction per call (the baseline the
evaluator replaces, in the same run), and one 1,000-node decision three ways. Writes
results/netaware_sim_cost.{json,md} and the bench/README.md section.

    bench/netaware/sim_cost.py [--build build] [--runs 3]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

ROWS = [
    ("fill_features", "fill_features (21 features + analytic estimate), per candidate", 1, "ns"),
    ("candidate", "fill_features + TreeModel::predict_s, per candidate", 1e3, "us"),
    ("xgboost_one_row", "XGBoost's own prediction, 1 row per call (baseline)", 1e3, "us"),
    ("xgboost_1000_rows", "XGBoost's own prediction, 1,000 rows per call", 1e6, "ms"),
    ("decision_model_all", "1,000-node decision, PlacementStep, model on every node", 1e6, "ms"),
    ("decision_analytic_all", "1,000-node decision, PlacementStep, analytic estimate on every node", 1e3, "us"),
    ("decision_prefilter32", "1,000-node decision, analytic for all + model on the best 32", 1e3, "us"),
    ("decision_policy_idle", "1,000-node decision, network-aware itself (model, prefilter 32, wait 0), idle nodes", 1e3, "us"),
    ("decision_policy_half_busy", "the same with its tasks on the 500 best nodes (the wait rule scans them)", 1e3, "us"),
]
TARGETS = {"candidate": "<= 5 us", "decision_prefilter32": "<= 200 us",
           "decision_policy_idle": "<= 200 us", "decision_policy_half_busy": "<= 200 us"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    prog = os.path.join(a.build, "bench", "netaware_sim_cost")
    runs = []
    for _ in range(a.runs):
        _, proc = benchlib.timed([prog])
        runs.append(json.loads(proc.stdout))
    summary = {}
    for key, _, _, _ in ROWS:
        summary[key] = {
            "cpu_ns": benchlib.median([r[key]["cpu_ns"] for r in runs]),
            "wall_ns": benchlib.median([r[key]["wall_ns"] for r in runs]),
        }
    first = runs[0]
    lines = [
        f"Model: {first['trees']} trees of depth {first['depth']}, trained on {first['rows']} simulator rows; "
        f"{first['nodes']} nodes. Median of {a.runs} runs x 7 repeats; thread CPU time (wall time beside it: "
        "the machine is shared).",
        "",
        "| figure | CPU | wall | target |",
        "|---|---|---|---|",
    ]
    for key, label, scale, unit in ROWS:
        s = summary[key]
        lines.append(f"| {label} | {s['cpu_ns'] / scale:,.2f} {unit} | {s['wall_ns'] / scale:,.2f} {unit} | "
                     f"{TARGETS.get(key, '-')} |")
    ratio = summary["xgboost_one_row"]["cpu_ns"] / summary["candidate"]["cpu_ns"]
    lines.append("")
    lines.append(f"XGBoost per call / ours per candidate: {ratio:,.1f}x (CPU time).")
    chosen = first["chosen"]
    lines.append(f"With the 500 best nodes busy, {chosen['half_busy_waited']:,} of the "
                 f"{7 * 1000:,} timed decisions waited for a busy node (first run).")
    table = "\n".join(lines)
    benchlib.write_result("netaware_sim_cost", {"runs": runs, "summary": summary}, table)
    print(table)


if __name__ == "__main__":
    main()
