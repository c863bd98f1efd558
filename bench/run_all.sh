#!/usr/bin/env bash
# Reruns every foundation benchmark and refreshes bench/results/ and the tables in bench/README.md.
#   bench/run_all.sh [BUILD_DIR]      (default: build; build it first with scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")"
build=$(cd .. && realpath "${1:-build}")
python3 launch_rate.py --build "$build" --tasks 5000 --repeats 5
python3 function_tasks.py --build "$build" --tasks 1000000 --repeats 5
python3 micro_figures.py --build "$build" --repetitions 5
# Issue 3: services, MPI and fine-grained tasks in one run (bench/services/README.md).
python3 services/coupling.py --build "$build" --tasks 20 --n 2000 --repeats 5
python3 services/mpi_overhead.py --build "$build" --repeats 30
python3 services/mixed.py --build "$build" --tasks 2000 --repeats 7
# Issue 4: queue policies in the simulator, and live beside the simulator (bench/sim/README.md).
python3 sim/run_simulate.py --chorus "$build/bin/chorus"
python3 sim/run_speed.py --chorus "$build/bin/chorus" --repeats 3
python3 sim/run_live.py --chorus "$build/bin/chorus" --repeats 3
# Issue 17: chorus serve (bench/serve/README.md): submissions, throughput vs chorus run, and the
# first task of a submission that needs a new pilot job vs sbatch (local Slurm cluster).
python3 serve/run_serve.py --build "$build" --submissions 1000 --tasks 2000 --repeats 5
python3 serve/first_task.py --build "$build" --repeats 5
