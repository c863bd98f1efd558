#!/usr/bin/env python3
"""Where a live stream's job waits before it runs, from a journal kept with `drive_policies.py
--mode stream --state DIR` (issue 14): per job, the clock's arrival record (j<k>.t) to the
clock task's `succeeded` event (the clock agent's report), that to the job's `running` event (the
decision, including any wait for a node), that to the job's first command on its node (j<k>.node,
the dispatch and the spawn), and the job's end record to its `succeeded` event.

    python3 bench/netaware/stream_overhead.py --state DIR [--name RESULT]

Writes bench/results/RESULT.{json,md}.
"""
import argparse
import glob
import os
import sqlite3
import statistics as st
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchlib  # noqa: E402

STEPS = [("report_s", "arrival record -> the clock task's `succeeded` event (clock agent's report)"),
         ("decision_s", "-> the job's `running` event (the decision, and any wait for a node)"),
         ("dispatch_s", "-> the job's first command on its node (dispatch, spawn)"),
         ("end_s", "the job's end record -> its `succeeded` event")]


def split(db, run, workdir):
    """Per step, the seconds of each job of one journaled stream run."""
    ev = {}
    for name, state, t in db.execute("select name, state, time from events where run = ?", (run,)):
        ev.setdefault(name, {})[state] = t
    steps = {key: [] for key, _ in STEPS}
    for tf in glob.glob(os.path.join(workdir, "**", "j*.t"), recursive=True):
        job = os.path.basename(tf)[:-2]
        out = os.path.dirname(tf)
        arrived = float(open(tf).read())
        clock_done = ev["c" + job[1:]]["succeeded"]
        running = ev[job]["running"]
        started = os.stat(os.path.join(out, job + ".node")).st_mtime_ns / 1e9
        ended = float(open(os.path.join(out, job + ".end")).read())
        steps["report_s"].append(clock_done - arrived)
        steps["decision_s"].append(running - clock_done)
        steps["dispatch_s"].append(started - running)
        steps["end_s"].append(ev[job]["succeeded"] - ended)
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True, help="the journal drive_policies.py --state kept")
    ap.add_argument("--name", default="netaware_stream_overhead_split")
    a = ap.parse_args()
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(a.state, "chorus.db"), uri=True)
    runs = {}
    for run, key, workdir in db.execute("select rowid, id, workdir from runs"):
        steps = split(db, run, workdir)
        runs[key] = {k: {"mean_s": st.mean(v), "median_s": st.median(v),
                         "p90_s": sorted(v)[int(0.9 * len(v))], "jobs": len(v)}
                     for k, v in steps.items() if v}
    keys = list(runs)
    lines = ["| step | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for k, label in STEPS:
        cells = ["%.1f ms (median %.1f, p90 %.1f)" % (runs[r][k]["mean_s"] * 1e3,
                                                      runs[r][k]["median_s"] * 1e3,
                                                      runs[r][k]["p90_s"] * 1e3)
                 for r in keys if k in runs[r]]
        lines.append("| %s | %s |" % (label, " | ".join(cells)))
    text = "\n".join(lines) + "\n"
    print(text)
    benchlib.write_result(a.name, {"state": a.state, "runs": runs}, text)


if __name__ == "__main__":
    main()
