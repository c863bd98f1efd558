#!/usr/bin/env python3
"""The network test bed: namespaces, a bridge, shaped links, far stores, slow nodes, background.

    netbed.py up --prefix P --nodes "10,50,200" [--stores 1] [--store-delay "0,20"]
                 [--cpu "1,1,0.25"] [--chorus BIN] [--relay BIN] [--bg-seed N]
                 [--bg-period 60] [--bg-levels "0,0.25,0.5,0.75"] [--bg-periods 30] [--no-bg]
                 [--out FILE]
    netbed.py down --prefix P                  removes everything P made (idempotent)
    netbed.py run-in --prefix P NODE cmd...    runs cmd in NODE's network namespace (nsenter
                                               --net, /sys as the host's: cgroups visible) and
                                               its cgroup
    netbed.py measure --prefix P [--seconds 2] link rates both ways and store RTTs, as JSON
    netbed.py bg --prefix P [--seed N] [--hold K | --off]
                                               restarts the background flows (with seed N's
                                               schedule; K: hold period K, a stationary phase)
    netbed.py describe --prefix P              prints the description file

Layout (every name starts with P-, every address lives only inside namespaces made here):
  P-br    the bridge's namespace: bridge br0 and the far ends of every veth (vhub, vn0, vs0, ...)
  P-hub   the coordinator, 10.S.0.1/16 on eth0 (unshaped)
  P-n<i>  node i, 10.S.1.<i+1>/16 on eth0: egress HTB at the node's rate, ingress through
          ifb0 (ingress qdisc + u32 match-all + mirred redirect) with the same HTB, so the rate
          holds both ways; a cgroup v1 cpu group P-n<i> with cpu.cfs_quota_us when --cpu < cores
  P-s<j>  store j, 10.S.2.<j+1>/16 (unshaped): `chorus data-server` on PORT 7000, or for a far
          store (--store-delay D > 0 ms) the server on 127.0.0.1:7001 behind delay_relay on 7000
S is chosen from the prefix (and away from any 10.S. route of the host's). Two beds with
different prefixes share nothing: each has its own bridge namespace.

Background: per node, a flow process (`netbed.py flow`, in the node's namespace) pulls from
store 0 with GET at a rate that changes every --bg-period seconds, drawn from a seeded schedule
(level x the node's rate; level from --bg-levels). The schedule and its start time are in the
description, so a run can be replayed and data sets split by whole schedules (seeds).

Exit status: 0 done, 1 failure (after removing what was made), 2 bad arguments, 77 skipped
(namespaces cannot be created here: one line on stderr says why).
"""

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

SKIP = 77
STORE_PORT = 7000
INNER_PORT = 7001
MEASURE_PORT = 7100
CGROUP_CPU = "/sys/fs/cgroup/cpu"
PERIOD_US = 100000


class BedError(Exception):
    pass


def sh(args, check=True, quiet=False):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise BedError("`%s` failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def ns_sh(ns, args, check=True):
    return sh(["ip", "netns", "exec", ns] + args, check=check)


def state_dir(prefix):
    return os.path.join(os.environ.get("TMPDIR", "/tmp"), "netbed-" + prefix)


def desc_path(prefix):
    return os.path.join(state_dir(prefix), "bed.json")


def load_desc(prefix):
    try:
        with open(desc_path(prefix)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def save_desc(desc, extra_out=None):
    os.makedirs(state_dir(desc["prefix"]), exist_ok=True)
    tmp = desc_path(desc["prefix"]) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(desc, f, indent=2)
    os.replace(tmp, desc_path(desc["prefix"]))
    if extra_out:
        with open(extra_out, "w") as f:
            json.dump(desc, f, indent=2)


def valid_prefix(p):
    # Short enough for 15-character interface and namespace-derived names, no separators.
    return re.fullmatch(r"[a-z][a-z0-9]{0,11}", p) is not None


def our_namespaces(prefix):
    pat = re.compile(r"^%s-(hub|br|n\d+|s\d+)$" % re.escape(prefix))
    out = sh(["ip", "netns", "list"], check=False).stdout
    return [l.split()[0] for l in out.splitlines() if l.split() and pat.match(l.split()[0])]


def our_cgroups(prefix):
    pat = re.compile(r"^%s-n\d+$" % re.escape(prefix))
    try:
        return [os.path.join(CGROUP_CPU, d) for d in os.listdir(CGROUP_CPU) if pat.match(d)]
    except OSError:
        return []


def pick_subnet(prefix):
    """10.S.0.0/16 with S from the prefix, skipping any S the host already routes."""
    routes = sh(["ip", "-4", "route", "show", "table", "all"], check=False).stdout
    routes += sh(["ip", "-4", "addr"], check=False).stdout
    used = set(int(m) for m in re.findall(r"\b10\.(\d+)\.", routes))
    start = 16 + sum(ord(c) * (i + 1) for i, c in enumerate(prefix)) % 224
    for k in range(224):
        s = 16 + (start - 16 + k) % 224
        if s not in used:
            return s
    raise BedError("no free 10.S.0.0/16 among 10.16-10.239 on this host")


def parse_list(text, conv, what):
    try:
        return [conv(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise SystemExit("netbed: %s must be a comma-separated list of numbers, got %r" % (what, text))


# ----------------------------------------------------------------------------------------- up


def htb(dev_ns, dev, mbit):
    """HTB at `mbit` on dev's egress, a byte fifo of ~100 ms (at least 64 KB) below it."""
    limit = max(64 * 1024, int(mbit * 1e6 / 8 * 0.1))
    ns_sh(dev_ns, ["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb",
                   "default", "10", "r2q", "1000"])
    ns_sh(dev_ns, ["tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
                   "rate", "%gmbit" % mbit, "ceil", "%gmbit" % mbit])
    ns_sh(dev_ns, ["tc", "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "bfifo",
                   "limit", str(limit)])


def add_netns(desc, ns):
    sh(["ip", "netns", "add", ns])
    desc["namespaces"].append(ns)
    save_desc(desc)
    ns_sh(ns, ["ip", "link", "set", "lo", "up"])


def attach(desc, ns, peer, addr):
    """eth0 in `ns`, its peer `peer` in the bridge namespace, enslaved to br0."""
    br = desc["bridge_ns"]
    sh(["ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", peer, "netns", br])
    ns_sh(br, ["ip", "link", "set", peer, "master", "br0", "up"])
    ns_sh(ns, ["ip", "addr", "add", addr + "/16", "dev", "eth0"])
    ns_sh(ns, ["ip", "link", "set", "eth0", "up"])


def spawn(desc, what, ns, argv, cgroup=None, log=None):
    """Starts argv in ns (and cgroup), own session; records its pid in the description."""
    logf = open(log or os.path.join(state_dir(desc["prefix"]), what.replace(" ", "-") + ".log"), "ab")

    def pre():
        os.setsid()
        if cgroup:
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    p = subprocess.Popen(["ip", "netns", "exec", ns] + argv, stdin=subprocess.DEVNULL,
                         stdout=logf, stderr=logf, preexec_fn=pre)
    desc["processes"].append({"pid": p.pid, "what": what, "ns": ns})
    save_desc(desc)
    return p


def log_tail(desc, what):
    """The last lines a process started by spawn() wrote (the state folder goes with `down`)."""
    try:
        with open(os.path.join(state_dir(desc["prefix"]), what.replace(" ", "-") + ".log")) as f:
            return " | ".join(f.read().strip().splitlines()[-3:]) or "(no output)"
    except OSError:
        return "(no log)"


def wait_port(ns, host, port, seconds=10.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        r = ns_sh(ns, [sys.executable, "-c",
                       "import socket,sys; s=socket.create_connection((%r,%d),0.5)" % (host, port)],
                  check=False)
        if r.returncode == 0:
            return True
        time.sleep(0.1)
    return False


def schedule_for(seed, node_index, rate, levels, periods):
    rng = random.Random(seed * 1000003 + node_index)
    return [round(rng.choice(levels) * rate, 3) for _ in range(periods)]


def start_flows(desc, hold=None):
    bg = desc["background"]
    store = desc["stores"][0]
    for i, node in enumerate(desc["nodes"]):
        sched = bg["schedule"][node["name"]]
        rates = [sched[hold % len(sched)]] if hold is not None else sched
        spawn(desc, "flow " + node["name"], node["ns"],
              [sys.executable, os.path.abspath(__file__), "flow", "--endpoint", store["endpoint"],
               "--rates", ",".join("%g" % r for r in rates), "--period", str(bg["period_s"]),
               "--t0", repr(bg["t0"])], cgroup=None)
    bg["hold"] = hold
    save_desc(desc)


def cmd_up(a):
    prefix = a.prefix
    rates = parse_list(a.nodes, float, "--nodes")
    if not rates or any(r <= 0 or r > 1000 for r in rates):
        raise SystemExit("netbed: --nodes needs 1+ rates in Mbit/s, each in (0, 1000]")
    delays = parse_list(a.store_delay, int, "--store-delay") if a.store_delay else []
    delays = (delays + [0] * a.stores)[: a.stores]
    cpus = parse_list(a.cpu, float, "--cpu") if a.cpu else []
    cpus = (cpus + [0.0] * len(rates))[: len(rates)]
    levels = parse_list(a.bg_levels, float, "--bg-levels")
    if any(d > 0 for d in delays) and not a.relay:
        raise SystemExit("netbed: a far store (--store-delay > 0) needs --relay PATH (delay_relay)")
    if our_namespaces(prefix) or load_desc(prefix):
        raise SystemExit("netbed: a bed with prefix %r exists; `netbed.py down --prefix %s` first"
                         % (prefix, prefix))
    # Can namespaces be made here at all?
    probe = "%s-probe" % prefix
    r = sh(["ip", "netns", "add", probe], check=False)
    if r.returncode != 0:
        print("netbed: skipped: cannot create network namespaces here (%s)" % r.stderr.strip(),
              file=sys.stderr)
        return SKIP
    sh(["ip", "netns", "del", probe], check=False)

    def on_term(signum, _frame):
        raise KeyboardInterrupt("signal %d" % signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    s = pick_subnet(prefix)
    desc = {
        "prefix": prefix, "subnet": "10.%d.0.0/16" % s, "bridge_ns": prefix + "-br",
        "created": time.time(), "namespaces": [], "cgroups": [], "processes": [],
        "hub": {"ns": prefix + "-hub", "address": "10.%d.0.1" % s},
        "nodes": [], "stores": [], "background": None,
    }
    os.makedirs(state_dir(prefix), exist_ok=True)
    save_desc(desc)
    try:
        add_netns(desc, desc["bridge_ns"])
        br = desc["bridge_ns"]
        ns_sh(br, ["ip", "link", "add", "br0", "type", "bridge"])
        ns_sh(br, ["ip", "link", "set", "br0", "up"])
        add_netns(desc, desc["hub"]["ns"])
        attach(desc, desc["hub"]["ns"], "vhub", desc["hub"]["address"])
        ncores = os.cpu_count() or 1
        for i, rate in enumerate(rates):
            ns = "%s-n%d" % (prefix, i)
            node = {"name": "n%d" % i, "ns": ns, "address": "10.%d.1.%d" % (s, i + 1),
                    "rate_mbit": rate, "cpu_quota_cores": None, "cgroup": None}
            add_netns(desc, ns)
            attach(desc, ns, "vn%d" % i, node["address"])
            htb(ns, "eth0", rate)
            ns_sh(ns, ["ip", "link", "add", "ifb0", "type", "ifb"])
            ns_sh(ns, ["ip", "link", "set", "ifb0", "txqueuelen", "1000", "up"])
            htb(ns, "ifb0", rate)
            ns_sh(ns, ["tc", "qdisc", "add", "dev", "eth0", "handle", "ffff:", "ingress"])
            ns_sh(ns, ["tc", "filter", "add", "dev", "eth0", "parent", "ffff:", "protocol", "all",
                       "u32", "match", "u32", "0", "0", "action", "mirred", "egress", "redirect",
                       "dev", "ifb0"])
            if 0 < cpus[i] < ncores:
                cg = os.path.join(CGROUP_CPU, ns)
                os.mkdir(cg)
                desc["cgroups"].append(cg)
                save_desc(desc)
                with open(os.path.join(cg, "cpu.cfs_period_us"), "w") as f:
                    f.write(str(PERIOD_US))
                with open(os.path.join(cg, "cpu.cfs_quota_us"), "w") as f:
                    f.write(str(int(cpus[i] * PERIOD_US)))
                node["cpu_quota_cores"] = cpus[i]
                node["cgroup"] = cg
            desc["nodes"].append(node)
        for j in range(a.stores):
            ns = "%s-s%d" % (prefix, j)
            addr = "10.%d.2.%d" % (s, j + 1)
            store = {"name": "s%d" % j, "ns": ns, "address": addr, "port": STORE_PORT,
                     "endpoint": "%s:%d" % (addr, STORE_PORT), "delay_ms": delays[j],
                     "server": None}
            add_netns(desc, ns)
            attach(desc, ns, "vs%d" % j, addr)
            desc["stores"].append(store)
            if a.chorus:
                inner = ("127.0.0.1", INNER_PORT) if delays[j] > 0 else (addr, STORE_PORT)
                spawn(desc, "data-server " + store["name"], ns,
                      [a.chorus, "data-server", "--listen", "%s:%d" % inner])
                if not wait_port(ns, inner[0], inner[1]):
                    raise BedError("`%s data-server` in %s did not listen on %s:%d: %s"
                                   % (a.chorus, ns, inner[0], inner[1],
                                      log_tail(desc, "data-server " + store["name"])))
                store["server"] = "%s:%d" % inner
            if delays[j] > 0:
                spawn(desc, "relay " + store["name"], ns,
                      [a.relay, "--listen", "%s:%d" % (addr, STORE_PORT), "--to",
                       "127.0.0.1:%d" % INNER_PORT, "--delay-ms", str(delays[j])])
                if not wait_port(ns, addr, STORE_PORT):
                    raise BedError("delay_relay in %s did not listen: %s"
                                   % (ns, log_tail(desc, "relay " + store["name"])))
        desc["relay"] = os.path.abspath(a.relay) if a.relay else None
        desc["chorus"] = os.path.abspath(a.chorus) if a.chorus else None
        desc["background"] = {
            "seed": a.bg_seed, "period_s": a.bg_period, "levels": levels, "t0": time.time(),
            "store": desc["stores"][0]["name"] if desc["stores"] else None, "hold": None,
            "running": False,
            "schedule": {n["name"]: schedule_for(a.bg_seed, i, n["rate_mbit"], levels, a.bg_periods)
                         for i, n in enumerate(desc["nodes"])},
        }
        save_desc(desc)
        if not a.no_bg and desc["stores"] and a.chorus:
            start_flows(desc)
            desc["background"]["running"] = True
        save_desc(desc, a.out)
    except BaseException as e:  # noqa: B902 - anything, Ctrl-C included: remove what was made
        msg = str(e) if isinstance(e, BedError) else repr(e)
        print("netbed: up failed: %s; removing what was made" % msg, file=sys.stderr)
        down(prefix)
        return 1
    print(desc_path(prefix) if not a.out else a.out)
    return 0


# --------------------------------------------------------------------------------------- down


def kill_pids(pids):
    live = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            live.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.time() + 3
    while live and time.time() < deadline:
        live = [p for p in live if alive(p)]
        time.sleep(0.05)
    for pid in live:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def down(prefix):
    """Removes every namespace, process and cgroup of the bed; links and qdiscs go with their
    namespaces (every veth and ifb was made inside one). Safe to call again."""
    desc = load_desc(prefix) or {}
    pids = [p["pid"] for p in desc.get("processes", [])]
    namespaces = our_namespaces(prefix)
    for ns in namespaces:  # anything still running inside our namespaces (agents, jobs)
        out = sh(["ip", "netns", "pids", ns], check=False).stdout
        pids += [int(x) for x in out.split() if x.isdigit()]
    cgroups = set(our_cgroups(prefix)) | set(desc.get("cgroups", []))
    for cg in cgroups:
        try:
            with open(os.path.join(cg, "cgroup.procs")) as f:
                pids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    # Only processes in our namespaces or cgroups, or recorded as started by us.
    kill_pids(sorted(set(pids)))
    reap()
    for ns in namespaces:
        sh(["ip", "netns", "del", ns], check=False)
    for cg in cgroups:
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)
    left = our_namespaces(prefix) + [c for c in cgroups if os.path.exists(c)]
    try:
        for f in os.listdir(state_dir(prefix)):
            os.unlink(os.path.join(state_dir(prefix), f))
        os.rmdir(state_dir(prefix))
    except OSError:
        pass
    if left:
        print("netbed: down left %s" % ", ".join(left), file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------------------------ run-in


def node_of(desc, name):
    for n in desc["nodes"] + desc["stores"] + [dict(desc["hub"], name="hub")]:
        if n.get("name") == name or n["ns"] == name:
            return n
    raise SystemExit("netbed: no node %r in bed %s (nodes: %s)" % (
        name, desc["prefix"], ", ".join(n["name"] for n in desc["nodes"] + desc["stores"])))


def require_desc(prefix):
    d = load_desc(prefix)
    if not d:
        raise SystemExit("netbed: no bed with prefix %r (no %s)" % (prefix, desc_path(prefix)))
    return d


def cmd_run_in(a):
    desc = require_desc(a.prefix)
    node = node_of(desc, a.node)
    cmd = a.argv[1:] if a.argv[:1] == ["--"] else a.argv
    if not cmd:
        raise SystemExit("netbed: run-in needs a command")
    if node.get("cgroup"):
        with open(os.path.join(node["cgroup"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    # nsenter --net, not `ip netns exec`: the latter mounts a fresh /sys for the namespace,
    # which hides /sys/fs/cgroup, so an agent there could not read its own CPU quota.
    # /proc/net/dev and rtnetlink follow the network namespace either way.
    os.execvp("nsenter", ["nsenter", "--net=/run/netns/" + node["ns"]] + cmd)


# ------------------------------------------------------------------------------------ flows


def pull(host, port, rate_of, stop):
    """One connection: GET at rate_of() Mbit/s in 50 ms slices, reconnecting after errors."""
    buf = bytearray(1 << 20)
    sock = None
    while not stop:
        rate = rate_of()
        if rate <= 0:
            time.sleep(0.2)
            continue
        try:
            if sock is None:
                sock = socket.create_connection((host, port), 5)
                sock.settimeout(10)
            t = time.time()
            n = max(1, int(rate * 1e6 / 8 * 0.05))
            sock.sendall(b"GET %d\n" % n)
            line = b""
            while not line.endswith(b"\n"):
                c = sock.recv(1)
                if not c:
                    raise OSError("closed")
                line += c
            left = n
            while left > 0:
                got = sock.recv_into(buf, min(left, len(buf)))
                if got == 0:
                    raise OSError("closed")
                left -= got
            spare = 0.05 - (time.time() - t)
            if spare > 0:
                time.sleep(spare)
        except OSError:
            if sock:
                sock.close()
            sock = None
            time.sleep(0.5)


def cmd_flow(a):
    """Background puller: GET at rates[k] Mbit/s in all during period k (from t0), over
    --streams connections (a competing job's one TCP connection then gets about 1/(streams+1)
    of the link, not half: the background takes what its rate says)."""
    import threading

    rates = parse_list(a.rates, float, "--rates")
    host, port = a.endpoint.rsplit(":", 1)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

    def rate_of():
        k = int((time.time() - a.t0) // a.period)
        return rates[k % len(rates)] / a.streams

    threads = [threading.Thread(target=pull, args=(host, int(port), rate_of, []), daemon=True)
               for _ in range(a.streams)]
    for t in threads:
        t.start()
    while True:
        time.sleep(3600)


def cmd_bg(a):
    desc = require_desc(a.prefix)
    kill_pids([p["pid"] for p in desc["processes"] if p["what"].startswith("flow ")])
    reap()
    desc["processes"] = [p for p in desc["processes"] if not p["what"].startswith("flow ")]
    desc["background"]["running"] = False
    bg = desc["background"]
    if a.seed is not None and a.seed != bg["seed"]:
        periods = len(next(iter(bg["schedule"].values()), [])) or 30
        bg["seed"] = a.seed
        bg["schedule"] = {n["name"]: schedule_for(a.seed, i, n["rate_mbit"], bg["levels"], periods)
                          for i, n in enumerate(desc["nodes"])}
    if a.hold is None:
        bg["t0"] = time.time()  # the schedule starts again at period 0
    if not a.off:
        if not desc["stores"] or not desc.get("chorus"):
            raise SystemExit("netbed: background flows need a store with a data server (--chorus)")
        start_flows(desc, a.hold)
        desc["background"]["running"] = True
    save_desc(desc)
    return 0


# ---------------------------------------------------------------------------------- measure

MEASURE_SERVER = r"""
import socket, sys, threading, time
def serve(c):
    try:
        op = c.recv(1)
        if op == b"D":
            buf = b"x" * (1 << 16)
            while True: c.sendall(buf)
        elif op == b"U":
            n = 0; t0 = None
            while True:
                b = c.recv(1 << 20)
                if not b: break
                if t0 is None: t0 = time.time()
                n += len(b); t1 = time.time()
            c.sendall(b"%d %.6f\n" % (n, (t1 - t0) if t0 else 0))
        elif op == b"E":
            while True:
                b = c.recv(64)
                if not b: break
                c.sendall(b)
    except OSError:
        pass
    finally:
        c.close()
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind((sys.argv[1], int(sys.argv[2]))); l.listen(16)
print("ready", flush=True)
while True:
    c, _ = l.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

MEASURE_CLIENT = r"""
import json, socket, sys, time
host, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
out = {}
s = socket.create_connection((host, port)); s.sendall(b"E"); rtts = []
for _ in range(10):
    t = time.time(); s.sendall(b"p"); s.recv(1); rtts.append(time.time() - t)
s.close(); out["rtt_ms"] = sorted(rtts)[len(rtts) // 2] * 1000
s = socket.create_connection((host, port)); s.sendall(b"D"); buf = bytearray(1 << 20)
t0 = time.time(); n = 0; warm = None
while time.time() - t0 < secs:
    n += s.recv_into(buf)
    if warm is None and time.time() - t0 > 0.3: warm = (time.time(), n)
s.close(); out["down_mbit"] = (n - warm[1]) * 8 / (time.time() - warm[0]) / 1e6
s = socket.create_connection((host, port)); s.sendall(b"U"); data = b"y" * (1 << 16)
t0 = time.time()
while time.time() - t0 < secs: s.sendall(data)
s.shutdown(socket.SHUT_WR); n, dt = s.makefile().readline().split()
out["up_mbit"] = int(n) * 8 / float(dt) / 1e6
print(json.dumps(out))
"""


def cmd_measure(a):
    """Each node's achieved TCP rate to store 0 both ways (receiver side) and the application
    round trip to every store (through its relay when far), one node at a time."""
    desc = require_desc(a.prefix)
    if not desc["stores"]:
        raise SystemExit("netbed: measure needs a store (--stores 1)")
    started = []
    targets = []
    try:
        for st in desc["stores"]:
            p = subprocess.Popen(["ip", "netns", "exec", st["ns"], sys.executable, "-c",
                                  MEASURE_SERVER, "0.0.0.0", str(MEASURE_PORT)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            started.append(p)
            p.stdout.readline()
            port = MEASURE_PORT
            if st["delay_ms"] > 0:
                r = subprocess.Popen(["ip", "netns", "exec", st["ns"], desc["relay"], "--listen",
                                      "%s:%d" % (st["address"], MEASURE_PORT + 1), "--to",
                                      "127.0.0.1:%d" % MEASURE_PORT, "--delay-ms",
                                      str(st["delay_ms"]), "--print"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                started.append(r)
                r.stdout.readline()
                port = MEASURE_PORT + 1
            targets.append((st, port))
        result = {"prefix": desc["prefix"], "seconds": a.seconds, "nodes": []}
        for node in desc["nodes"]:
            row = {"name": node["name"], "rate_mbit": node["rate_mbit"], "stores": {}}
            for st, port in targets:
                secs = a.seconds if st is desc["stores"][0] else 0.5
                r = ns_sh(node["ns"], [sys.executable, "-c", MEASURE_CLIENT, st["address"],
                                       str(port), str(secs)])
                row["stores"][st["name"]] = json.loads(r.stdout)
            result["nodes"].append(row)
        print(json.dumps(result, indent=2))
    finally:
        for p in started:
            p.terminate()
            p.wait()
    return 0


# ------------------------------------------------------------------------------------- main


def main(argv):
    ap = argparse.ArgumentParser(prog="netbed.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--prefix", required=True)
    up.add_argument("--nodes", required=True, help="link rates in Mbit/s, one per node")
    up.add_argument("--stores", type=int, default=1)
    up.add_argument("--store-delay", default="", help="one-way ms per store (0: near)")
    up.add_argument("--cpu", default="", help="CPU quota in cores per node (0: none)")
    up.add_argument("--chorus", help="the chorus binary: data servers in the stores")
    up.add_argument("--relay", help="the delay_relay binary (needed for far stores)")
    up.add_argument("--bg-seed", type=int, default=1)
    up.add_argument("--bg-period", type=float, default=60.0)
    up.add_argument("--bg-levels", default="0,0.25,0.5,0.75")
    up.add_argument("--bg-periods", type=int, default=30)
    up.add_argument("--no-bg", action="store_true")
    up.add_argument("--out", help="also write the description here")
    for name in ("down", "describe", "measure", "bg"):
        p = sub.add_parser(name)
        p.add_argument("--prefix", required=True)
        if name == "measure":
            p.add_argument("--seconds", type=float, default=2.0)
        if name == "bg":
            p.add_argument("--hold", type=int)
            p.add_argument("--seed", type=int, help="switch to the schedule of this seed")
            p.add_argument("--off", action="store_true")
    ri = sub.add_parser("run-in")
    ri.add_argument("--prefix", required=True)
    ri.add_argument("node")
    ri.add_argument("argv", nargs=argparse.REMAINDER)
    fl = sub.add_parser("flow")
    fl.add_argument("--endpoint", required=True)
    fl.add_argument("--rates", required=True)
    fl.add_argument("--period", type=float, default=60.0)
    fl.add_argument("--t0", type=float, default=time.time())
    fl.add_argument("--streams", type=int, default=4)
    a = ap.parse_args(argv)
    if hasattr(a, "prefix") and not valid_prefix(a.prefix):
        raise SystemExit("netbed: --prefix must be 1-12 of [a-z0-9], starting with a letter")
    if os.geteuid() != 0 and a.cmd in ("up", "down", "run-in", "measure", "bg"):
        print("netbed: skipped: network namespaces need root (euid %d)" % os.geteuid(),
              file=sys.stderr)
        return SKIP
    if a.cmd == "up":
        return cmd_up(a)
    if a.cmd == "down":
        return down(a.prefix)
    if a.cmd == "run-in":
        return cmd_run_in(a)
    if a.cmd == "measure":
        return cmd_measure(a)
    if a.cmd == "bg":
        return cmd_bg(a)
    if a.cmd == "flow":
        return cmd_flow(a)
    if a.cmd == "describe":
        print(json.dumps(require_desc(a.prefix), indent=2))
        return 0
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit as e:
        if isinstance(e.code, str):  # a usage error raised with its message
            print(e.code, file=sys.stderr)
            sys.exit(2)
        raise
