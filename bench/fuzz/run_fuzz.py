#!/usr/bin/env python3
"""A longer libFuzzer run of every reader's target (tests/fuzz/), anyone can rerun.

Each target fuzzes for --minutes from its committed seed corpus (tests/fuzz/corpus/<target>/, and
its dictionary), under ASan + UBSan with the suite's limits (-rss_limit_mb=2048,
-malloc_limit_mb=1024, -timeout=10). A crash, leak, UBSan report, OOM or timeout stops libFuzzer:
the input is kept in <work>/<target>/artifacts/, the report's kind and top frames are recorded,
and the target restarts with the time left and the corpus it grew (at most --max-findings per
target; a finding with the same kind and top frame as an earlier one is counted, not repeated).
Figures per target: executions (libFuzzer's stat::number_of_executed_units, summed over restarts),
coverage (cov and ft of the last "#N ... cov: ft:" status line: edges and features), the
grown corpus, the findings.

    cmake -S . -B build-fuzz -G Ninja -DCHORUS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 && cmake --build build-fuzz
    bench/fuzz/run_fuzz.py [--build build-fuzz] [--minutes 5] [--parallel 1] [--targets a,b]

Writes bench/results/fuzz-<date>.json and the table in bench/README.md (unless --no-write).
Python 3 standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FUZZ_SRC = os.path.join(ROOT, "tests", "fuzz")
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import RESULTS_DIR, machine, write_result  # noqa: E402

TARGETS = ["workflow", "wfcommons", "workload_json", "workload_csv", "agent_message"]
LIMITS = ["-rss_limit_mb=2048", "-malloc_limit_mb=1024", "-timeout=10"]
STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
KINDS = [
    (re.compile(r"ERROR: libFuzzer: out-of-memory \(malloc\((\d+)\)\)"), "oom-malloc"),
    (re.compile(r"ERROR: libFuzzer: out-of-memory"), "oom-rss"),
    (re.compile(r"ERROR: libFuzzer: timeout"), "timeout"),
    (re.compile(r"ERROR: LeakSanitizer"), "leak"),
    (re.compile(r"ERROR: AddressSanitizer: (\S+)"), "asan"),
    (re.compile(r"runtime error: (.*)"), "ubsan"),
    (re.compile(r"terminate called after throwing an instance of '([^']+)'"), "uncaught-exception"),
    (re.compile(r"ERROR: libFuzzer: deadly signal"), "deadly-signal"),
    (re.compile(r"ERROR: libFuzzer: fuzz target exited"), "exit"),
]
FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (.+)$")


def classify(log):
    kind, detail = "unknown", ""
    for pattern, name in KINDS:
        m = pattern.search(log)
        if m:
            kind, detail = name, (m.group(1) if m.groups() else "")
            break
    frames = []
    for line in log.splitlines():
        m = FRAME.match(line)
        if m:
            text = m.group(2).strip()
            # Skip the sanitizer/libFuzzer runtime and libstdc++ plumbing: name our code's frames.
            if re.search(r"compiler-rt|libFuzzer|/libsanitizer|__sanitizer|__asan|__ubsan|"
                         r"libc\.so|libstdc\+\+|include/c\+\+/|fuzzer::", text):
                continue
            frames.append(re.sub(r"^(.{0,240}).*$", r"\1", text))
            if len(frames) == 6:
                break
        elif frames and not line.strip():
            break
    if not frames:  # e.g. UBSan's one line "file:line:col: runtime error: ..."
        m = re.search(r"^(\S+:\d+:\d+): runtime error", log, re.M)
        if m:
            frames = [m.group(1)]
    return kind, detail, frames


def run_target(build, target, seconds, work_root, max_findings, say):
    binary = os.path.join(build, "tests", "fuzz", f"fuzz_{target}")
    work = os.path.join(work_root, target)
    shutil.rmtree(work, ignore_errors=True)
    grown, artifacts = os.path.join(work, "corpus"), os.path.join(work, "artifacts")
    os.makedirs(grown)
    os.makedirs(artifacts)
    seeds = os.path.join(FUZZ_SRC, "corpus", target)
    dict_path = os.path.join(FUZZ_SRC, "dicts", f"{target}.dict")
    dict_arg = [f"-dict={dict_path}"] if os.path.exists(dict_path) else []
    start = time.monotonic()
    deadline = start + seconds
    executions, cov, ft, corp, runs = 0, 0, 0, 0, 0
    findings, signatures = [], {}
    while True:
        left = int(deadline - time.monotonic())
        if left < 5 or len(findings) >= max_findings:
            break
        runs += 1
        log_path = os.path.join(work, f"run-{runs}.log")
        cmd = [binary, *LIMITS, *dict_arg, f"-max_total_time={left}", "-print_final_stats=1",
               f"-seed={runs}", f"-artifact_prefix={artifacts}/", grown, seeds]
        with open(log_path, "w") as log:
            code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
        text = open(log_path, errors="replace").read()
        m = re.findall(r"stat::number_of_executed_units: (\d+)", text)
        if m:
            executions += int(m[-1])
        else:  # a crash prints no final stats: the last status line's count
            st = [STATUS.match(line) for line in text.splitlines()]
            st = [s for s in st if s]
            executions += int(st[-1].group(1)) if st else 0
        for line in text.splitlines():
            s = STATUS.match(line)
            if s:
                cov, ft, corp = max(cov, int(s.group(2))), max(ft, int(s.group(3))), int(s.group(4))
        if code == 0:
            break
        kind, detail, frames = classify(text)
        unit = re.findall(r"Test unit written to (\S+)", text)
        # A timeout's stack is wherever the alarm struck: our first frame names it better.
        ours = [f for f in frames if "chorus::" in f]
        signature = (kind, (ours or frames or [detail])[0].split(" /")[0])
        if signature in signatures:
            signatures[signature]["count"] += 1
            if unit:
                signatures[signature]["more_inputs"].append(unit[-1])
            if signatures[signature]["count"] >= 3:
                say(f"{target}: {kind} found 3 times; stopping this target")
                break
            continue
        finding = {"kind": kind, "detail": detail, "frames": frames,
                   "input": unit[-1] if unit else None, "log": log_path, "count": 1,
                   "more_inputs": [], "after_s": round(seconds - (deadline - time.monotonic()))}
        signatures[signature] = finding
        findings.append(finding)
        say(f"{target}: {kind} {detail} at {frames[:1]} -> {finding['input']}")
    grown_files = len(os.listdir(grown))
    result = {"target": target, "seconds": seconds,
              "elapsed_s": round(time.monotonic() - start), "libfuzzer_runs": runs,
              "executions": executions, "cov": cov, "ft": ft, "corpus_seeds": len(os.listdir(seeds)),
              "corpus_grown": grown_files, "findings": findings}
    say(f"{target}: {executions:,} executions, cov {cov} ft {ft}, {len(findings)} findings")
    return result


def table(results):
    rows = ["| target | minutes | executions | exec/s | cov | ft | corpus (seeds + grown) | findings |",
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        kinds = ", ".join(f"{f['kind']} x{f['count']}" for f in r["findings"]) or "0"
        elapsed = r.get("elapsed_s", r["seconds"])
        rate = r["executions"] / elapsed if elapsed else 0
        ran = f"{elapsed / 60:.1f}" + (" (stopped: a finding recurred)" if elapsed < r["seconds"] - 30 else "")
        rows.append(f"| `fuzz_{r['target']}` | {ran} | {r['executions']:,} | {rate:,.0f} | "
                    f"{r['cov']} | {r['ft']} | {r['corpus_seeds']} + {r['corpus_grown']} | {kinds} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-fuzz"))
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--parallel", type=int, default=1, help="targets fuzzed at once")
    ap.add_argument("--max-findings", type=int, default=8, help="distinct findings per target")
    ap.add_argument("--work", default=os.path.join(ROOT, "build-fuzz", "bench-fuzz"),
                    help="grown corpora, artifacts and logs")
    ap.add_argument("--label", default="", help="results/fuzz-<date>-<label>.json (several runs a day)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    targets = [t for t in args.targets.split(",") if t]
    say = lambda m: print(m, flush=True)  # noqa: E731
    seconds = int(args.minutes * 60)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = [pool.submit(run_target, os.path.abspath(args.build), t, seconds,
                               os.path.abspath(args.work), args.max_findings, say) for t in targets]
        results = [f.result() for f in futures]
    markdown = table(results)
    print(markdown)
    if not args.no_write:
        data = {"args": vars(args), "limits": LIMITS, "targets": results, "machine": machine()}
        name = f"fuzz-{time.strftime('%Y-%m-%d')}" + (f"-{args.label}" if args.label else "")
        write_result(name, data, markdown, block="fuzz")
        print("wrote", os.path.join(RESULTS_DIR, name + ".json"))
    return 1 if any(r["findings"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
