"""Shared helpers for the macro benchmarks: medians, result files, the bench/README.md table.

Every script writes bench/results/<name>.json (all raw runs + the summary) and replaces the
block between `<!-- results:<name> -->` and `<!-- /results:<name> -->` in bench/README.md.
"""
import json
import os
import platform
import statistics
import subprocess
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(BENCH_DIR, "results")


def median(values):
    return statistics.median(values) if values else float("nan")


def machine():
    return {
        "host": platform.node(),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def timed(cmd, **kwargs):
    """Runs cmd, returns (seconds, CompletedProcess). Raises on a non-zero exit."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return dt, proc


def write_result(name, data, table_markdown, block=None, measured_on=None):
    """results/<name>.json and .md, and the README's <!-- results:<block> --> section (block
    defaults to name; a dated result file can refresh one undated README section).
    measured_on: the machine record of the run the figures come from (a result rescored from an
    older one keeps its own); default: this machine, now."""
    block_name = block or name
    os.makedirs(RESULTS_DIR, exist_ok=True)
    data = dict(data, machine=measured_on or machine())
    with open(os.path.join(RESULTS_DIR, name + ".json"), "w") as f:
        json.dump(data, f, indent=2)
    with open(os.path.join(RESULTS_DIR, name + ".md"), "w") as f:
        f.write(table_markdown + "\n")
    readme = os.path.join(BENCH_DIR, "README.md")
    begin, end = f"<!-- results:{block_name} -->", f"<!-- /results:{block_name} -->"
    text = open(readme).read()
    block = f"{begin}\n{table_markdown}\n_{data['machine']['date']}, {data['machine']['cores']} cores_\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(readme, "w") as f:
        f.write(text)
