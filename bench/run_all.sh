#!/usr/bin/env bash
# Reruns every foundation benchmark and refreshes bench/results/ and the tables in bench/README.md.
#   bench/run_all.sh [BUILD_DIR]      (default: build; build it first with scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")"
build=$(cd .. && realpath "${1:-build}")
python3 launch_rate.py --build "$build" --tasks 5000 --repeats 5
python3 function_tasks.py --build "$build" --tasks 1000000 --repeats 5
python3 micro_figures.py --build "$build" --repetitions 5
