#!/usr/bin/env python3
"""chorus serve's memory as tasks go through it (issue 17): a served instance on a state folder
of its own, `--batches` submissions of one `--tasks`-task /bin/true workflow each, the server's
VmRSS (/proc/PID/status) after each batch has finished. Prints a table and writes
bench/results/serve_memory.json. Usage: python3 bench/serve/memory.py --build build"""
import argparse, json, os, pathlib, signal, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--tasks", type=int, default=1000)
ap.add_argument("--batches", type=int, default=20)
a = ap.parse_args()
chorus = str(pathlib.Path(a.build).resolve() / "bin" / "chorus")
root = pathlib.Path(__file__).resolve().parents[2]

with tempfile.TemporaryDirectory() as d:
    state = f"{d}/state"
    wf = f"{d}/wf.yaml"
    pathlib.Path(wf).write_text(
        f'name: many\ntasks:\n  - name: t\n    foreach: {{i: "range(0, {a.tasks})"}}\n'
        "    command: [/bin/true]\n")
    server = subprocess.Popen([chorus, "serve", "--state", state, "--cores", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = f"{state}/serve.sock"
    while not os.path.exists(sock):
        time.sleep(0.05)

    def rss_kb():
        for line in open(f"/proc/{server.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

    def wait_idle():
        while True:
            out = subprocess.run([chorus, "list", "--json", "--server", sock], cwd=d,
                                 capture_output=True, text=True).stdout
            if '"running"' not in out:
                return
            time.sleep(0.5)

    rows = []
    try:
        for b in range(1, a.batches + 1):
            subprocess.run([chorus, "submit", wf, "--server", sock], cwd=d, check=True,
                           capture_output=True)
            wait_idle()
            rows.append({"tasks": b * a.tasks, "rss_kb": rss_kb()})
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()

def slope(first, last):
    return (last["rss_kb"] - first["rss_kb"]) * 1024 / (last["tasks"] - first["tasks"])


# After the first batch: what the instance keeps per task, the SQLite page caches and malloc's
# arenas filling up included. Over the second half: the steady growth, once those are full.
per_task = slope(rows[0], rows[-1])
steady = slope(rows[len(rows) // 2], rows[-1])
print("| tasks through the server | VmRSS (MB) |\n|---|---|")
for r in rows:
    print(f"| {r['tasks']} | {r['rss_kb'] / 1024:.1f} |")
print(f"kept per task after the first batch: {per_task:.0f} bytes; over the second half: "
      f"{steady:.0f} bytes")
out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "tasks_per_batch": a.tasks, "rows": rows,
       "bytes_per_task": round(per_task), "steady_bytes_per_task": round(steady)}
(root / "bench/results/serve_memory.json").write_text(json.dumps(out, indent=1) + "\n")
