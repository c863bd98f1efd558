#!/usr/bin/env python3
"""Where a live stream's job waits before it runs, from a journal kept with `drive_policies.py
--mode stream --state DIR` (issue 14): per job, the clock's arrival record (j<k>.t) to the
clock task's `succeeded` event (the clock agent's report), that to the job's `running` event (the
decision, including any wait for a node), that to the job's first command on its node (j<k>.node,
the dispatch and the spawn), and the job's end record to its `succeeded` event.

    python3 bench/netaware/stream_overhead.py [--state DIR]
"""
import argparse
import glob
import os
import sqlite3
import statistics as st

ap = argparse.ArgumentParser()
ap.add_argument('--state', default='/tmp/ovh_state')
a = ap.parse_args()
db = sqlite3.connect('file:%s?mode=ro' % os.path.join(a.state, 'chorus.db'), uri=True)
for rid, workdir in db.execute("select n, workdir from runs").fetchall():
    run = db.execute("select rowid from runs where workdir=?", (workdir,)).fetchone()[0]
    ev = {}
    for name, state, t in db.execute("select name,state,time from events where run=?", (run,)):
        ev.setdefault(name, {})[state] = t
    tfiles = glob.glob(os.path.join(workdir, '**', 'j*.t'), recursive=True)
    ab, bc, cd, de = [], [], [], []
    for tf in tfiles:
        j = os.path.basename(tf)[:-2]; k = j[1:]
        out = os.path.dirname(tf)
        A = float(open(tf).read()); B = ev['c'+k]['succeeded']; C = ev[j]['running']
        D = os.stat(os.path.join(out, j + '.node')).st_mtime_ns/1e9
        E = float(open(os.path.join(out, j + '.end')).read()); F = ev[j]['succeeded']
        ab.append(B-A); bc.append(C-B); cd.append(D-C); de.append(F-E)
    f = lambda v: "mean %.4f median %.4f p90 %.4f" % (st.mean(v), st.median(v), sorted(v)[int(0.9*len(v))])
    print(workdir, len(tfiles))
    print("  arrival -> clock journaled succeeded:", f(ab))
    print("  -> job running (decision):           ", f(bc))
    print("  -> .node written on the node:        ", f(cd))
    print("  .end -> job journaled succeeded:     ", f(de))
