#!/usr/bin/env bash
# Issue 18: does `lane_cores: auto`'s cap (C / 16) hold beyond 32 and 128 cores? Both generators
# with their contention kept as the cluster grows (bursty: heavy jobs as wide as the cluster,
# job counts x C/32; zipf: users and jobs x C/32 over the same 400 s), 1 s pieces, seeds 1-5
# (medians), lanes 0, C/32, C/16, C/8 and auto. Writes bench/results/uwfq_lane_sizes.txt (~4 min
# on 2 shared cores, most of it zipf at 512 cores).
#   bench/sim/lane_sizes.sh [CHORUS]
set -euo pipefail
cd "$(dirname "$0")/../.."
CHORUS=${1:-build/bin/chorus}
OUT=bench/results/uwfq_lane_sizes.txt
sim() { "$CHORUS" simulate --seeds 5 --partition 1s "$@"; }
{
  echo "# bench/sim/lane_sizes.sh, $(date -u +%F): small mean, large mean per policy (medians of seeds 1-5)"
  for spec in "8x4 1" "32x4 4" "128x4 16"; do
    set -- $spec
    nodes=$1 s=$2 C=$((${1%x4} * 4))
    for lane in 0 $((C / 32)) $((C / 16)) $((C / 8)) auto; do
      [[ $lane == 0 || $lane == auto || $lane -ge 1 ]] || continue
      b=$(sim --workload gen:bursty --cluster "$nodes" --scale "$s" --gen-params job_tasks=$((32 * s)) \
        --compare fair,uwfq --option lane_cores=$lane | awk '/^(fair|uwfq) /{printf "%s %s %s  ", $1, $2, $4}')
      z=$(sim --workload gen:zipf --cluster "$nodes" --gen-params users=$((20 * s)),jobs=$((600 * s)) \
        --compare fifo,fair,uwfq --option lane_cores=$lane | awk '/^(fifo|fair|uwfq) /{printf "%s %s %s  ", $1, $2, $4}')
      printf 'C=%-4s lane=%-4s | bursty: %s| zipf: %s\n' "$C" "$lane" "$b" "$z"
    done
  done
} | tee "$OUT"
