#!/usr/bin/env python3
"""dbw+'s grace x window on held-out seeds, in the targets' configuration and the live check's
(issue 15; how the 2026-12-04 defaults were chosen, docs/quorum-policies.md).

For each configuration, scenario and variant it runs `chorus simulate-quorum --json` with the
curvature probe on the same seeds (default 101-105, not the seeds 1-10 the targets are reported
on) and prints, per variant, each scenario's median time to the target relative to the
configuration's reference policy (above 1: faster), the mean k, and the worst case and mean.
Writes bench/results/dbw/<--name>.{json,md}. Python 3 standard library only.

    bench/dbw/sweep_defaults.py [--chorus build/bin/chorus] [--seeds 5] [--first-seed 101]
        [--variants 'grace=0.25,window=10;grace=0.2,window=20;...'] [--name dbw/sweep_defaults]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import write_result  # noqa: E402

CONFIGS = {
    # name: (flags, reference policy, scenarios)
    "n16-eta0.05": ([], "static:b=10", ["S1", "S2", "S3", "S4", "S5", "S6"]),
    "n8-eta0.5": (["--n", "8", "--samples", "4000", "--lr", "0.5", "--base", "0.02", "--tail",
                   "0.02", "--target-fraction", "0.1"], "static:b=0", ["S1", "S2"]),
}

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--chorus", default=os.path.join(ROOT, "build", "bin", "chorus"))
ap.add_argument("--seeds", type=int, default=5)
ap.add_argument("--first-seed", type=int, default=101)
ap.add_argument("--variants", default="grace=0.25,window=10;grace=0.1,window=40;"
                "grace=0.15,window=40;grace=0.2,window=40;grace=0.2,window=20")
ap.add_argument("--name", default="dbw/sweep_defaults")
args = ap.parse_args()
variants = [v for v in args.variants.split(";") if v]

results = {}
lines = [f"dbw+ variants, medians of seeds {args.first_seed}-{args.first_seed + args.seeds - 1}, "
         "curvature probe on; ratio = the reference's time / the variant's (above 1: faster), "
         "k = mean results per round", ""]
for cname, (flags, ref, scenarios) in CONFIGS.items():
    compare = ",".join([ref] + [f"dbw+:{v}" for v in variants])
    per = {}
    for sc in scenarios:
        out = subprocess.run([args.chorus, "simulate-quorum", "--scenario", sc, *flags,
                              "--compare", compare, "--seeds", str(args.seeds), "--seed",
                              str(args.first_seed), "--curvature", "--jobs", "2", "--json"],
                             capture_output=True, text=True, check=True).stdout
        pols = {p["policy"]: p for p in json.loads(out)["policies"]}
        per[sc] = pols
        print(f"{cname} {sc} done", file=sys.stderr, flush=True)
    results[cname] = per
    lines += [f"### {cname} (reference {ref})", "",
              "| variant | " + " | ".join(scenarios) + " | worst | mean |",
              "|---|" + "---|" * (len(scenarios) + 2)]
    for v in variants:
        cells, ratios = [], []
        for sc in scenarios:
            r, p = per[sc][ref]["median_time_s"], per[sc][f"dbw+:{v}"]
            t = p["median_time_s"]
            ratio = r / t if r and t else 0.0
            ratios.append(ratio)
            cells.append(f"{ratio:.2f}x (k {p['median_mean_k']:.2f})")
        lines.append(f"| {v} | " + " | ".join(cells) +
                     f" | {min(ratios):.2f}x | {sum(ratios) / len(ratios):.2f}x |")
    lines.append("")
table = "\n".join(lines)
write_result(args.name, {"args": vars(args), "results": results}, table,
             block=args.name.replace("/", "_"))
print(table)
