#!/usr/bin/env python3
"""Rebuilds the text seed corpora of tests/fuzz/corpus/ from real inputs of the repository.

  workflow/       examples/**/*.yaml and the YAML documents embedded in tests/workflows/*.cpp
  wfcommons/      the instances of /work/shared/data/wfcommons (or $WFCOMMONS_DIR) cut to a few
                  tasks (consistent: parents, children and files of kept tasks only), in the 1.5
                  layout and converted to the 1.4 one
  workload_json/  the JSON workloads of tests/schedulers/*.cpp and a few written here
  workload_csv/   the CSV workloads of tests/schedulers/*.cpp and a few written here
The agent_message corpus is written by the fuzz build's fuzz_make_agent_corpus (encode_*).
Files are named by content hash, so rerunning adds nothing when nothing changed.
Usage: tests/fuzz/make_corpus.py   (from anywhere)
"""
import copy
import glob
import hashlib
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")
MAX_BYTES = 8192  # small seeds keep libFuzzer's mutations cheap


def save(target, text, limit=40):
    data = text.encode() if isinstance(text, str) else text
    if not data or len(data) > MAX_BYTES:
        return
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if len(os.listdir(folder)) >= limit:
        return
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


RAW = re.compile(r'R"(\w*)\((.*?)\)\1"', re.S)
PLAIN = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def literals(path):
    src = open(path).read()
    for m in RAW.finditer(src):
        yield m.group(2)
    for m in PLAIN.finditer(src):
        yield bytes(m.group(1), "utf-8").decode("unicode_escape")


def workflows():
    for f in sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.yaml"), recursive=True)):
        save("workflow", open(f).read())
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "workflows", "test_*.cpp"))):
        for text in RAW.finditer(open(f).read()):
            body = text.group(2)
            if "tasks" in body and "\n" in body or body.startswith("tasks:"):
                save("workflow", body)


def cut(instance, n):
    """The first n tasks of a 1.5 instance, with every reference kept inside them."""
    doc = copy.deepcopy(instance)
    spec = doc["workflow"]["specification"]
    tasks = spec["tasks"][:n]
    keep = {t["id"] for t in tasks}
    files = set()
    for t in tasks:
        t["parents"] = [p for p in t.get("parents", []) if p in keep]
        t["children"] = [c for c in t.get("children", []) if c in keep]
        t["inputFiles"] = t.get("inputFiles", [])[:3]
        t["outputFiles"] = t.get("outputFiles", [])[:3]
        files.update(t["inputFiles"] + t["outputFiles"])
    spec["tasks"] = tasks
    spec["files"] = [f for f in spec.get("files", []) if f["id"] in files]
    ex = doc["workflow"]["execution"]
    ex["tasks"] = [t for t in ex["tasks"] if t["id"] in keep]
    for t in ex["tasks"]:
        t["machines"] = t.get("machines", [])[:1]
        if "command" in t:
            t["command"]["arguments"] = t["command"].get("arguments", [])[:3]
    used = {m for t in ex["tasks"] for m in t.get("machines", [])}
    ex["machines"] = [m for m in ex.get("machines", []) if m.get("nodeName") in used]
    doc.pop("description", None)
    return doc


def to_v14(doc):
    """The same tasks in the WfFormat 1.4 layout (one task list, files per task with a link)."""
    spec = doc["workflow"]["specification"]
    size = {f["id"]: f.get("sizeInBytes", 0) for f in spec.get("files", [])}
    execs = {t["id"]: t for t in doc["workflow"]["execution"]["tasks"]}
    tasks = []
    for t in spec["tasks"]:
        e = execs.get(t["id"], {})
        files = [{"name": f, "size": size.get(f, 0), "link": "input"} for f in t["inputFiles"]]
        files += [{"name": f, "size": size.get(f, 0), "link": "output"} for f in t["outputFiles"]]
        task = {"name": t["name"], "id": t["id"], "type": "compute", "parents": t["parents"],
                "children": t["children"], "files": files,
                "runtimeInSeconds": e.get("runtimeInSeconds", 1.0)}
        for k in ("coreCount", "memoryInBytes", "avgCPU"):
            if k in e:
                task[k] = e[k]
        tasks.append(task)
    return {"name": doc.get("name", "w"), "schemaVersion": "1.4",
            "workflow": {"makespanInSeconds": 1, "executedAt": "20200101T000000+0000",
                         "machines": [], "tasks": tasks}}


def wfcommons():
    data = os.environ.get("WFCOMMONS_DIR", "/work/shared/data/wfcommons")
    for f in sorted(glob.glob(os.path.join(data, "*-001.json"))):
        instance = json.load(open(f))
        if instance.get("schemaVersion") != "1.5":
            continue
        for n in (2, 5):
            small = cut(instance, n)
            save("wfcommons", json.dumps(small, indent=1))
            save("wfcommons", json.dumps(to_v14(small)))
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "*", "test_*wfcommons*.cpp"))):
        for text in literals(f):
            if text.lstrip().startswith("{") and "schemaVersion" in text:
                save("wfcommons", text)


WORKLOADS_JSON = [
    '{"name": "two users", "jobs": [\n'
    ' {"id": "a1", "user": "alice", "class": "etl", "size": "small", "arrival": 0,\n'
    '  "tasks": [{"runtime": 1.5, "cores": 1}, {"runtime": 2, "cores": 2, "after": [0]}]},\n'
    ' {"id": "b1", "user": "bob", "arrival": 0.5, "after_previous": true, "divisible": true,\n'
    '  "weight": 2, "tasks": {"count": 8, "runtime": 1.0, "cores": 1}}]}\n',
    '[{"id": "j", "user": "u", "arrival": 0, "tasks": {"count": 1, "runtime": 0.001}}]',
    '{"jobs": [{"id": "x", "user": "u", "size": "large", "arrival": 3,'
    ' "tasks": [{"runtime": 1}, {"runtime": 1, "after": [0]}, {"runtime": 1, "after": [0, 1]}]}]}',
]
WORKLOADS_CSV = [
    "job,user,arrival,runtime\nj1,alice,0,1.5\nj1,alice,0,2\nj2,bob,0.5,1\n",
    "job,user,arrival,runtime,cores,class,size,divisible,weight\n"
    "a,alice,0,1,2,etl,small,false,1\na,alice,0,1,1,etl,small,false,1\n"
    "b,bob,1,3,1,ml,large,true,2\n",
    'user,job,runtime,arrival\n"bob",b1,1,0\n"al,ice",a1,2,0.25\n',
    "job,user,arrival,runtime\r\nj1,u,0,1\r\n",
]


def workloads():
    for text in WORKLOADS_JSON:
        save("workload_json", text)
    for text in WORKLOADS_CSV:
        save("workload_csv", text)
    for f in sorted(glob.glob(os.path.join(ROOT, "tests", "schedulers", "test_*.cpp"))):
        for text in literals(f):
            t = text.lstrip()
            if t.startswith(("{", "[")) and '"id"' in t:
                save("workload_json", text)
            elif t.startswith("job,") or ",user," in t.split("\n")[0]:
                save("workload_csv", text)


if __name__ == "__main__":
    workflows()
    wfcommons()
    workloads()
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        size = sum(os.path.getsize(os.path.join(CORPUS, target, f)) for f in files)
        print(f"{target}: {len(files)} files, {size} bytes")
