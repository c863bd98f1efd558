#!/usr/bin/env python3
"""N short Pods three ways on the local cluster (tests/k8s/cluster.sh), in the same run:
chorus run --backend kubernetes, the same N Pods created one POST each (what `kubectl apply` of
N manifests sends; no kubectl binary exists here) then waited for, and one batch/v1 Job with N
completions at the same parallelism. Reports wall time, completion rate, API requests per task
as the API server itself counts them (apiserver_request_total from /metrics, every verb and
resource, our watch included) and, for chorus, the coordinator's CPU per task.

    bench/k8s/run.py --build build --n 200 --repeats 3 [--out bench/results/k8s]
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
    with open(os.path.join(d, "wf.yaml"), "w") as f:
        f.write(f"name: bench\ndefaults:\n  image: {IMAGE}\n  image_pull_policy: Never\n"
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
    own = json.load(open(stats))["requests"]  # start's checks, creates, logs, watch, DELETE
    return {"wall_s": wall, "succeeded": ok, "exit": p.returncode, "own_requests": own, "cpu_s": ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime, "tail": err[-300:]}


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "k8s"))
    a = ap.parse_args()
    nodes = [x["metadata"]["name"] for x in json.loads(api("GET", "/api/v1/nodes"))["items"]]
    cores = sum(int(x["status"]["allocatable"]["cpu"]) for x in json.loads(api("GET", "/api/v1/nodes"))["items"])
    rows = []
    for r in range(a.repeats):
        for way in ("chorus", "direct", "job"):
            if way == "chorus":
                res, reqs = metric_delta(lambda: run_chorus(a.build, a.n, cores))
            elif way == "direct":
                res, reqs = metric_delta(lambda: run_direct(a.n, nodes))
            else:
                res, reqs = metric_delta(lambda: run_job(a.n, cores))
            res.update(way=way, repeat=r, n=a.n, api_requests=reqs, requests_per_task=reqs / a.n,
                       own_requests_per_task=res["own_requests"] / a.n,
                       tasks_per_s=res["succeeded"] / res["wall_s"])
            rows.append(res)
            print(json.dumps({k: v for k, v in res.items() if k != "tail"}), flush=True)
    os.makedirs(a.out, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d")
    with open(os.path.join(a.out, f"run_{stamp}_n{a.n}.json"), "w") as f:
        json.dump({"n": a.n, "nodes": nodes, "parallel_cores": cores, "rows": rows}, f, indent=1)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(f"\nN={a.n}, {len(nodes)} nodes, {cores} cores, medians of {a.repeats}:")
    print("req/task: all the API server served during the run (kubelets and controllers too) per task;")
    print("own/task: the requests of the client itself (chorus: counted by its launcher and watch)")
    print(f"{'way':8} {'wall s':>8} {'tasks/s':>8} {'done':>6} {'req/task':>9} {'own/task':>9} {'cpu ms/task':>12}")
    for way in ("chorus", "direct", "job"):
        rs = [x for x in rows if x["way"] == way]
        cpu = f"{med([x['cpu_s'] for x in rs]) * 1000 / a.n:12.1f}" if way == "chorus" else f"{'-':>12}"
        print(f"{way:8} {med([x['wall_s'] for x in rs]):8.1f} {med([x['tasks_per_s'] for x in rs]):8.2f} "
              f"{med([x['succeeded'] for x in rs]):6d} {med([x['requests_per_task'] for x in rs]):9.2f} "
              f"{med([x['own_requests_per_task'] for x in rs]):9.2f} {cpu}")


if __name__ == "__main__":
    main()
