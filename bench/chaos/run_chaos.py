#!/usr/bin/env python3
"""Chaos: SIGKILL `chorus run` and its resumes at seeded random moments, resume until done.

A workflow of --tasks short shell tasks (every 10th sleeps 0.3 s, every 100th 3 s) in which each
task appends "<CHORUS_TASK> <CHORUS_ATTEMPT>" to one shared log (an O_APPEND write of one short
line, so lines never interleave), so every execution is countable. One round: `chorus run`, then
`chorus run --resume` until the run ends, each of them SIGKILLed after a seeded random delay
(uniform in [--min-delay, --max-delay] s) while kills remain. After each kill, with the
coordinator dead, it records:
  - `PRAGMA integrity_check` of the journal (a read-only connection: nothing is checkpointed),
  - the tasks the journal has as succeeded (`chorus status --json --tasks`) and the log's length.
At the end of a round:
  - lost: tasks the final journal does not have as succeeded, or that never wrote a line,
  - reruns: log lines written after a kill by a task the journal had as succeeded at that kill,
  - leftovers: processes still running with the round's CHAOS_MARKER in their environment (the
    workflow's own `env:`, not CHORUS_RUN_ID: independent of how chorus identifies its runs).
Rounds repeat (a fresh state folder each) until --kills kills were made. Exits 1 if any
lost task, rerun, leftover or failed integrity check was counted (the suite's instance relies
on it), 0 otherwise.

    bench/chaos/run_chaos.py [--chorus build/bin/chorus] [--tasks 2000] [--kills 34] [--seed 1]
                             [--cores 16] [--workdir DIR] [--no-write] [--quiet]

Writes bench/results/chaos-<date>.json (every kill) and the table in bench/README.md, unless
--no-write. Python 3 standard library only; Linux (/proc).
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import RESULTS_DIR, machine, write_result  # noqa: E402


def workflow(tasks, marker, log):
    # Sleeps via the shell's `case`: sweeps have no arithmetic. {i} ends in 00 -> 3 s, 0 -> 0.3 s.
    return f"""name: chaos
env: {{CHAOS_MARKER: "{marker}"}}
defaults: {{retries: 0, cores: 1}}
tasks:
  - name: t
    foreach: {{i: "range(0, {tasks})"}}
    shell: true
    command: 'echo "$CHORUS_TASK $CHORUS_ATTEMPT" >> {log}; case {{i}} in *00) sleep 3;; *0) sleep 0.3;; esac'
"""


def marked_processes(marker):
    """Pids of the processes whose environment holds CHAOS_MARKER=<marker>."""
    needle = f"CHAOS_MARKER={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != "Z":
            found.append(int(entry))
    return found


def integrity(db):
    if not os.path.exists(db):
        return "no journal yet"
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            rows = con.execute("PRAGMA integrity_check").fetchall()
        finally:
            con.close()
    except sqlite3.Error as e:
        return f"error: {e}"
    return "; ".join(str(r[0]) for r in rows)


def status(chorus, cwd):
    proc = subprocess.run([chorus, "status", "--json", "--tasks"], cwd=cwd, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def log_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split()[0] for line in f.read().splitlines() if line.strip()]


def one_round(args, rng, kills_left, round_no, say):
    """Runs one workflow to completion under kills. Returns the round's record."""
    if args.workdir:
        work = os.path.join(os.path.abspath(args.workdir), f"round-{round_no}")
        os.makedirs(work)
    else:
        work = tempfile.mkdtemp(prefix="chorus-chaos-")
    marker = f"chaos-{os.getpid()}-{round_no}-{rng.randrange(1 << 30)}"
    log = os.path.join(work, "executions.log")
    with open(os.path.join(work, "wf.yaml"), "w") as f:
        f.write(workflow(args.tasks, marker, log))
    db = os.path.join(work, ".chorus", "chorus.db")
    kills, attempts = [], 0
    cmd = [args.chorus, "run", "wf.yaml", "--cores", str(args.cores)]
    final_exit = None
    while True:
        attempts += 1
        with open(os.path.join(work, f"coordinator-{attempts}.err"), "w") as err:
            proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=err)
        delay = rng.uniform(args.min_delay, args.max_delay) if kills_left > 0 else None
        try:
            code = proc.wait(timeout=delay if delay is not None else args.run_timeout)
        except subprocess.TimeoutExpired:
            if delay is None:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"round {round_no}: a resume ran past {args.run_timeout} s")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills_left -= 1
            st = status(args.chorus, work)
            succeeded = sorted(t["task"] for t in (st or {}).get("tasks", [])
                               if t.get("state") == "succeeded")
            kills.append({"attempt": attempts, "after_s": round(delay, 3),
                          "integrity": integrity(db), "journal_succeeded": succeeded,
                          "log_length": len(log_lines(log))})
            say(f"round {round_no}: kill {len(kills)} after {delay:.2f} s: "
                f"{len(succeeded)} succeeded, integrity {kills[-1]['integrity']}")
            if st is None:
                # Killed before the run was journaled: start it again rather than resume.
                continue
            cmd = [args.chorus, "run", "--resume", st["run"], "--cores", str(args.cores)]
            continue
        final_exit = code
        break
    leftovers = marked_processes(marker)
    for pid in leftovers:  # count them, then do not leave them to the next round
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except OSError:
            pass
    st = status(args.chorus, work) or {}
    final_ok = {t["task"] for t in st.get("tasks", []) if t.get("state") == "succeeded"}
    lines = log_lines(log)
    ran = set(lines)
    expected = {f"t[i={i}]" for i in range(args.tasks)}
    lost = sorted((expected - final_ok) | (expected - ran))
    reruns = []
    for k in kills:
        done = set(k.pop("journal_succeeded"))  # the sets stay out of the result file
        k["journal_succeeded"] = len(done)
        reruns += [name for name in lines[k["log_length"]:] if name in done]
    record = {"round": round_no, "workdir": work, "coordinators": attempts, "kills": kills,
              "final_exit": final_exit, "final_status": st.get("status"), "lost": lost,
              "reruns": reruns, "leftovers": leftovers, "executions": len(lines),
              "bad_integrity": [k["integrity"] for k in kills
                                if k["integrity"] not in ("ok", "no journal yet")]}
    say(f"round {round_no}: {len(kills)} kills, exit {final_exit} ({record['final_status']}), "
        f"{len(lines)} executions, lost {len(lost)}, reruns {len(reruns)}, "
        f"leftovers {len(leftovers)}")
    return record, kills_left


def table(summary):
    s = summary
    return ("| tasks | K kills | seed | rounds | coordinators | executions | lost | reruns of journaled "
            "successes | leftover processes | integrity_check after each kill |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n"
            f"| {s['tasks']} | {s['kills']} | {s['seed']} | {s['rounds']} | {s['coordinators']} | "
            f"{s['executions']} | {s['lost']} | {s['reruns']} | {s['leftovers']} | "
            f"{s['integrity_ok']}/{s['integrity_checked']} ok |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--kills", type=int, default=34)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cores", type=int, default=16, help="--cores of chorus run (tasks mostly sleep)")
    ap.add_argument("--min-delay", type=float, default=0.3)
    ap.add_argument("--max-delay", type=float, default=2.5)
    ap.add_argument("--run-timeout", type=float, default=600)
    ap.add_argument("--workdir", help="rounds go in WORKDIR/round-N (default: fresh temp folders)")
    ap.add_argument("--no-write", action="store_true", help="print only (the suite's instance)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    args.chorus = os.path.abspath(args.chorus)
    say = (lambda _: None) if args.quiet else (lambda m: print(m, flush=True))

    rng = random.Random(args.seed)
    rounds, kills_left = [], args.kills
    while kills_left > 0 or not rounds:
        record, kills_left = one_round(args, rng, kills_left, len(rounds) + 1, say)
        rounds.append(record)
    checked = [k for r in rounds for k in r["kills"] if k["integrity"] != "no journal yet"]
    summary = {
        "tasks": args.tasks, "kills": sum(len(r["kills"]) for r in rounds), "seed": args.seed,
        "rounds": len(rounds), "coordinators": sum(r["coordinators"] for r in rounds),
        "executions": sum(r["executions"] for r in rounds),
        "lost": sum(len(r["lost"]) for r in rounds),
        "reruns": sum(len(r["reruns"]) for r in rounds),
        "leftovers": sum(len(r["leftovers"]) for r in rounds),
        "integrity_checked": len(checked),
        "integrity_ok": sum(1 for k in checked if k["integrity"] == "ok"),
        "not_succeeded": sum(1 for r in rounds if r["final_status"] != "succeeded"),
    }
    markdown = table(summary)
    print(markdown)
    failed = (summary["lost"] or summary["reruns"] or summary["leftovers"] or
              summary["integrity_ok"] != summary["integrity_checked"] or summary["not_succeeded"])
    if failed:
        for r in rounds:
            if r["lost"] or r["reruns"] or r["leftovers"] or r["bad_integrity"]:
                print(f"round {r['round']} ({r['workdir']}): lost {r['lost'][:10]} reruns "
                      f"{r['reruns'][:10]} leftovers {r['leftovers']} integrity {r['bad_integrity']}",
                      file=sys.stderr)
    if not args.no_write:
        data = {"args": vars(args), "summary": summary, "rounds": rounds, "machine": machine()}
        name = f"chaos-{time.strftime('%Y-%m-%d')}"
        write_result(name, data, markdown, block="chaos")
        print("wrote", os.path.join(RESULTS_DIR, name + ".json"))
    if not failed:
        for r in rounds:
            subprocess.run(["rm", "-rf", r["workdir"]], check=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
