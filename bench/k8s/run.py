#!/usr/bin/env python3
"""N short Pods three ways on the local cluster (tests/k8s/cluster.sh), in the same run:
chorus run --backend kubernetes, the same N Pods created one POST each (what `kubectl apply` of
N manifests sends; no kubectl binary exists here) then waited for, and one batch/v1 Job with N
completions at the same parallelism. Reports wall time, completion rate, API requests per task
as the API server itself counts them (apiserver_request_total from /metrics, every verb and
resource, our watch included) and, for chorus, the coordinator's CPU per task.

    bench/k8s/run.py --build build --n 200 --repeats 3 [--out bench/results/k8s]

A repeat of the three at N=200 takes about 15 minutes here; to keep each hold of the cluster lock
short, run one repeat per cluster start and gather them in one file with --append:

    for r in 1 2 3; do flock /tmp/chorus-k8s.lock bash -c 'tests/k8s/cluster.sh start &&
      bench/k8s/run.py --n 200 --repeats 1 --append bench/results/k8s/run_DATE_n200.json;
      rc=$?; tests/k8s/cluster.sh stop; exit $rc'; done
    bench/k8s/run.py --summarize bench/results/k8s/run_DATE_n200.json   # the table, no cluster
"""
import argparse, json, os, re, resource, ssl, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
K8S_DIR = os.environ.get("CHORUS_K8S_DIR", "/tmp/chorus-k8s")
IMAGE = "localhost/busybox:1.35"


def kubeconfig_field(name):
    for line in open(os.path.join(K8S_DIR, "kubeconfig")):
        if line.strip().startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise SystemExit(f"no {name} in {K8S_DIR}/kubeconfig: start the cluster (tests/k8s/cluster.sh start)")


SERVER = TOKEN = CTX = None


def connect():
    global SERVER, TOKEN, CTX
    SERVER, TOKEN = kubeconfig_field("server"), kubeconfig_field("token")
    CTX = ssl.create_default_context(cafile=os.path.join(K8S_DIR, "pki", "ca.crt"))


def api(method, path, body=None):
    req = urllib.request.Request(SERVER + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=CTX, timeout=30) as r:
        return r.read().decode()


def requests_total():
    """Sum of apiserver_request_total over every verb and resource (minus this call itself)."""
    total = 0.0
    for line in api("GET", "/metrics").splitlines():
        if line.startswith("apiserver_request_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def metric_delta(fn):
    before = requests_total()
    out = fn()
    after = requests_total()
    return out, after - before - 1  # the /metrics GET of `after` counts itself


def pods(selector):
    return json.loads(api("GET", "/api/v1/namespaces/default/pods?labelSelector=" + selector))["items"]


def delete_all(selector):
    api("DELETE", "/api/v1/namespaces/default/pods?labelSelector=" + selector,
        {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    while pods(selector):
        time.sleep(0.5)


def run_chorus(build, n, parallel_cores):
    d = tempfile.mkdtemp(prefix="k8s-bench-")
    # A name of its own per run: Pods of the last run still terminating never meet this one's.
    name = f"bench{int(time.time())}"
    with open(os.path.join(d, "wf.yaml"), "w") as f:
        f.write(f"name: {name}\ndefaults:\n  image: {IMAGE}\n  image_pull_policy: Never\n"
                f"tasks:\n  - name: t\n    command: \"true\"\n    cores: 1\n    foreach: {{i: \"range(0, {n})\"}}\n")
    cmd = [os.path.join(build, "bin", "chorus"), "run", "wf.yaml", "--backend", "kubernetes",
           "--kubeconfig", os.path.join(K8S_DIR, "kubeconfig")]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = os.path.join(d, "stats.json")
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, CHORUS_K8S_STATS=stats))
    _, err = p.communicate()
    wall = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"(\d+) succeeded", err)
    ok = int(m.group(1)) if m else 0
    st = json.load(open(stats))  # requests = start (discovery, nodes) + watch + worker
    return {"wall_s": wall, "succeeded": ok, "exit": p.returncode, "own_requests": st["requests"],
            "own_split": {k: v for k, v in st.items() if k != "requests"},
            "cpu_s": ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime, "tail": err[-300:]}


def pod_manifest(name, label):
    # No nodeName: kube-scheduler places them and holds what does not fit (a Pod bound by
    # nodeName to a full node fails with OutOfcpu), as `kubectl apply` of N Pods would.
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"bench": label}},
            "spec": {"restartPolicy": "Never", "enableServiceLinks": False,
                     "containers": [{"name": "t", "image": IMAGE, "imagePullPolicy": "Never", "command": ["true"],
                                     "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}}


def run_direct(n, nodes):
    """All N Pods created at once (like kubectl apply -f dir/), then waited for by polling a LIST
    every second (what `kubectl wait` would do with a watch; counted either way)."""
    label = f"direct-{int(time.time())}"
    own = [0]
    t0 = time.monotonic()
    for i in range(n):
        api("POST", "/api/v1/namespaces/default/pods", pod_manifest(f"{label}-{i}", label))
        own[0] += 1
    done = 0
    while time.monotonic() - t0 < 1800:
        items = pods("bench%3D" + label)
        own[0] += 1
        done = sum(1 for p in items if p["status"].get("phase") in ("Succeeded", "Failed"))
        if done == n:
            break
        time.sleep(1)
    wall = time.monotonic() - t0
    ok = sum(1 for p in pods("bench%3D" + label) if p["status"].get("phase") == "Succeeded")
    delete_all("bench%3D" + label)
    return {"wall_s": wall, "succeeded": ok, "own_requests": own[0] + 2}


def run_job(n, parallelism):
    name = f"bench-job-{int(time.time())}"
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"completions": n, "parallelism": parallelism, "backoffLimit": 0,
                    "template": {"metadata": {"labels": {"bench": name}},
                                 "spec": {"restartPolicy": "Never", "enableServiceLinks": False,
                                          "containers": [{"name": "t", "image": IMAGE, "imagePullPolicy": "Never",
                                                          "command": ["true"],
                                                          "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]}}}}
    t0 = time.monotonic()
    api("POST", "/apis/batch/v1/namespaces/default/jobs", job)
    ok, own = 0, 1
    while time.monotonic() - t0 < 1800:
        own += 1
        st = json.loads(api("GET", f"/apis/batch/v1/namespaces/default/jobs/{name}"))["status"]
        ok = st.get("succeeded", 0)
        if ok + st.get("failed", 0) >= n:
            break
        time.sleep(1)
    wall = time.monotonic() - t0
    api("DELETE", f"/apis/batch/v1/namespaces/default/jobs/{name}", {"propagationPolicy": "Background"})
    delete_all("bench%3D" + name)
    # Our own: the POST, the polls, the DELETE; the Job controller's creates are in api_requests.
    return {"wall_s": wall, "succeeded": ok, "own_requests": own + 1}


def summarize(doc):
    rows, n = doc["rows"], doc["n"]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    reps = len({x["repeat"] for x in rows})
    print(f"\nN={n}, {len(doc['nodes'])} nodes, {doc['parallel_cores']} cores, medians of {reps}:")
    print("req/task: all the API server served during the run (kubelets and controllers too) per task;")
    print("own/task: the requests of the client itself (chorus: counted by its launcher and watch)")
    print("| way | wall s | tasks/s | done | req/task (server) | own/task | coordinator CPU |")
    print("|---|---|---|---|---|---|---|")
    names = {"chorus": "chorus", "direct": "direct POSTs", "job": "batch/v1 Job"}
    for way in ("chorus", "direct", "job"):
        rs = [x for x in rows if x["way"] == way]
        if not rs:
            continue
        cpu = f"{med([x['cpu_s'] for x in rs]) * 1000 / n:.1f} ms/task" if way == "chorus" else "-"
        print(f"| {names[way]} | {med([x['wall_s'] for x in rs]):.1f} | {med([x['tasks_per_s'] for x in rs]):.2f} | "
              f"{med([x['succeeded'] for x in rs])}/{n} | {med([x['requests_per_task'] for x in rs]):.2f} | "
              f"{med([x['own_requests_per_task'] for x in rs]):.3f} | {cpu} |")
    for x in rows:
        if x["way"] == "chorus" and "own_split" in x:
            sp = x["own_split"]
            parts = " + ".join(f"{k} {v}" for k, v in sp.items())
            print(f"chorus repeat {x['repeat']} ({x.get('commit', '?')}): {x['own_requests']} own requests"
                  f" = {parts} (one create and one log request per task: {2 * n})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "k8s"))
    ap.add_argument("--ways", default="chorus,direct,job", help="which of chorus,direct,job to run")
    ap.add_argument("--append", help="add this invocation's repeats to the rows of this file")
    ap.add_argument("--summarize", help="print the table of a results file and exit")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)  # chorus runs in a folder of its own
    if a.summarize:
        summarize(json.load(open(a.summarize)))
        return
    connect()
    nodes = [x["metadata"]["name"] for x in json.loads(api("GET", "/api/v1/nodes"))["items"]]
    cores = sum(int(x["status"]["allocatable"]["cpu"]) for x in json.loads(api("GET", "/api/v1/nodes"))["items"])
    rows = []
    if a.append and os.path.exists(a.append):
        prev = json.load(open(a.append))
        if prev["n"] != a.n:
            raise SystemExit(f"{a.append} holds N={prev['n']}, not {a.n}")
        rows = prev["rows"]
    first = 1 + max([x["repeat"] for x in rows], default=-1)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if a.append:
        path = a.append
    else:
        os.makedirs(a.out, exist_ok=True)
        path = os.path.join(a.out, f"run_{time.strftime('%Y-%m-%d')}_n{a.n}.json")
    doc = {"n": a.n, "nodes": nodes, "parallel_cores": cores, "rows": rows}

    def save():  # after every row: a repeat cut short keeps what it measured
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)

    for r in range(first, first + a.repeats):
        for way in a.ways.split(","):
            if way == "chorus":
                res, reqs = metric_delta(lambda: run_chorus(a.build, a.n, cores))
            elif way == "direct":
                res, reqs = metric_delta(lambda: run_direct(a.n, nodes))
            else:
                res, reqs = metric_delta(lambda: run_job(a.n, cores))
            res.update(way=way, repeat=r, n=a.n, api_requests=reqs, requests_per_task=reqs / a.n,
                       own_requests_per_task=res["own_requests"] / a.n,
                       tasks_per_s=res["succeeded"] / res["wall_s"], commit=commit,
                       at=time.strftime("%Y-%m-%d %H:%M:%S"))
            rows.append(res)
            save()
            print(json.dumps({k: v for k, v in res.items() if k != "tail"}), flush=True)
    summarize(doc)


if __name__ == "__main__":
    main()
