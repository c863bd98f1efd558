#!/usr/bin/env python3
"""Planner benchmark: SPWD+CBC vs whole-instance CBC vs HEFT on the bundled WfCommons instances.

For every instance in the data folder and every max subgraph size in {25%, 10%, 5%} of its task
count it runs `chorus plan --planner spwd`; once per instance it runs `--planner milp` (CBC on the
whole instance, --milp-limit seconds) and `--planner heft`. Writes planners.json (every record) and
planners.md (the table) into the results folder and prints the table. Python 3 standard library
only. See bench/planners/README.md.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def run_plan(chorus, instance, platform, planner, extra, timeout):
    cmd = [chorus, "plan", instance, "--platform", platform, "--planner", planner, "--json"] + extra
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "wall_s": time.monotonic() - t0}
    wall = time.monotonic() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip() or f"exit {p.returncode}", "wall_s": wall}
    out = json.loads(p.stdout)
    out.pop("assignment", None)
    out.pop("nodes", None)
    out["wall_s"] = wall
    return out


def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chorus", default=os.environ.get("CHORUS_BIN", os.path.join(ROOT, "build", "bin", "chorus")))
    ap.add_argument("--platform", default=os.path.join(ROOT, "examples", "platforms", "paper5.yaml"))
    ap.add_argument("--data", default=os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "wfcommons")))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--milp-limit", type=float, default=120)
    ap.add_argument("--mss", default="25,10,5", help="percentages of the task count")
    ap.add_argument("--only", default="", help="substring filter on instance file names")
    ap.add_argument("--reuse-milp", metavar="JSON", default="",
                    help="take whole-instance CBC records from an earlier planners.json instead of "
                         "rerunning them (same platform and limit assumed)")
    args = ap.parse_args()
    reused = {}
    if args.reuse_milp:
        with open(args.reuse_milp) as fh:
            old = json.load(fh)
        reused = {r["instance"]: {k: v for k, v in r.items() if k not in ("instance", "planner")}
                  for r in old["records"] if r.get("planner") == "milp"}

    files = sorted(f for f in os.listdir(args.data)
                   if f.endswith(".json") and "schema" not in f and args.only in f)
    if not files:
        sys.exit(f"no instances in {args.data}")
    records, rows = [], []
    for f in files:
        inst = os.path.join(args.data, f)
        name = f.replace("-chameleon", "").replace("-001.json", "")
        print(f"== {name}", file=sys.stderr, flush=True)
        heft = run_plan(args.chorus, inst, args.platform, "heft", [], 600)
        if name in reused:
            milp = dict(reused[name], reused_from=args.reuse_milp)
        else:
            milp = run_plan(args.chorus, inst, args.platform, "milp",
                            ["--time-limit", f"{args.milp_limit}s"], args.milp_limit * 3 + 120)
        records += [{"instance": name, "planner": "heft", **heft},
                    {"instance": name, "planner": "milp", **milp}]
        whole_cost = milp.get("cost")
        if "error" in milp:
            whole_status = "no solution" if "no solution" in milp["error"] else "error: " + milp["error"][:60]
        else:
            st = milp["stats"]
            whole_status = "optimal" if st["status"] == "optimal" else f"gap {100 * st['gap']:.2f}%"
        for pct in args.mss.split(","):
            spwd = run_plan(args.chorus, inst, args.platform, "spwd", ["--mss", pct + "%"], 900)
            records.append({"instance": name, "planner": "spwd", "mss_percent": float(pct), **spwd})
            if "error" in spwd:
                rows.append([name, pct + "%", "error: " + spwd["error"][:60]] + [""] * 13)
                continue
            st = spwd["stats"]
            def vs(cost):
                return (cost / whole_cost - 1) * 100 if whole_cost else None
            reclaim = st.get("reclaim_cost") or st["merged_cost"]
            ratios = [vs(c) for c in (st["merged_cost"], reclaim, spwd["cost"])]
            rows.append([
                name, f"{pct}% ({spwd['mss']})", str(spwd["tasks"]),
                fmt(st["merged_cost"]), fmt(reclaim), fmt(spwd["cost"]),
                "-" if whole_cost is None else " / ".join(f"{r:+.1f}%" for r in ratios),
                f"{spwd['solve_s']:.2f}", f"{st['pieces']} (≤{st['max_piece_size']})",
                fmt(whole_cost), whole_status, "-" if "error" in milp else f"{milp['solve_s']:.1f}",
                fmt(heft.get("cost")), fmt(heft.get("makespan_s")),
                fmt(spwd["deadline_s"]),
                "/".join("yes" if r.get("deadline_met") else ("-" if "error" in r else "NO")
                         for r in (spwd, milp, heft)),
            ])
    header = ["instance", "mss", "tasks", "SPWD cost (paper)", "SPWD+reclaim cost",
              "SPWD+DP+reclaim cost", "vs whole CBC (paper / +reclaim / +DP+reclaim)", "SPWD s", "pieces (largest)", "whole CBC cost",
              "whole CBC status", "whole CBC s", "HEFT cost", "HEFT makespan s", "deadline s",
              "deadline met SPWD/CBC/HEFT"]
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    os.makedirs(args.out, exist_ok=True)
    meta = {"platform": args.platform, "milp_limit_s": args.milp_limit, "chorus": args.chorus,
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "records": records}
    with open(os.path.join(args.out, "planners.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
    with open(os.path.join(args.out, "planners.md"), "w") as fh:
        fh.write("# Planner benchmark (bench/planners/run_planners.py)\n\n")
        fh.write(f"Platform {os.path.basename(args.platform)}, whole-instance CBC limit "
                 f"{args.milp_limit:g} s, deadline = critical path at the mean speed. "
                 "Costs in price x seconds. 'SPWD cost (paper)' is the merged SPWD plan; "
                 "'SPWD+reclaim' adds slack reclamation; 'SPWD+DP+reclaim' is `chorus plan`'s "
                 "default: the deadline distributed by dynamic programming over the decomposition "
                 "tree (docs/spwd.md), then reclamation, or the reclaim-only plan when cheaper. "
                 "Times ('SPWD s': all of it) are wall seconds of `chorus plan`'s planning call "
                 "on a shared 2-core machine.\n\n")
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
