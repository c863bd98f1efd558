#!/usr/bin/env bash
# How often Open MPI's MPI_Init crashes on the test cluster's virtual Slurm nodes, without chorus:
# RUNS plain `srun --mpi=pmix` steps of tests/mpi_hello per fence algorithm of Slurm's PMIx plugin
# (SLURM_PMIX_FENCE: default = Slurm's "mixed", tree, ring), RANKS ranks spread evenly over NODES
# nodes, with the Open MPI settings chorus gives steps on one host (btl=self,tcp over lo). A step
# counts as crashed when srun fails or a rank's "sum" line is missing. tests/slurm/README.md
# reads the figures. Prints one line per fence and appends them to bench/results/mpi_startup.txt.
#   bench/mpi/startup_crashes.sh [RUNS [RANKS [NODES [FENCE...]]]]   (defaults: 100 8 2 default tree ring)
# Needs root and a build (build/tests/mpi_hello); starts the test cluster if it is not running and
# stops it again at the end in that case. About 1.5 s per step on 2 shared cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-100} RANKS=${2:-8} NODES=${3:-2}
shift $(($# < 3 ? $# : 3))
FENCES=("$@")
((${#FENCES[@]})) || FENCES=(default tree ring)
HELLO=$PWD/build/tests/mpi_hello
[[ -x $HELLO ]] || { echo "startup_crashes.sh: $HELLO not built" >&2; exit 2; }
((RANKS % NODES == 0)) || { echo "startup_crashes.sh: RANKS must be a multiple of NODES" >&2; exit 2; }

started=0
tests/slurm/cluster.sh status >/dev/null 2>&1 || { tests/slurm/cluster.sh start >/dev/null; started=1; }
eval "$(tests/slurm/cluster.sh env)"
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  ((started)) && tests/slurm/cluster.sh stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The node list of an even spread, one entry per rank (--distribution=arbitrary, as chorus writes it).
nodelist=""
for ((n = 1; n <= NODES; n++)); do
  for ((r = 0; r < RANKS / NODES; r++)); do nodelist+="${nodelist:+,}n$n"; done
done
want_sum=$((RANKS * (RANKS - 1) / 2))

cat >"$work/steps.sh" <<SCRIPT
#!/usr/bin/env bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
[[ \$FENCE == default ]] || export SLURM_PMIX_FENCE=\$FENCE
crashed=0
for ((i = 1; i <= $RUNS; i++)); do
  out=\$(srun --mpi=pmix --nodes=$NODES --ntasks=$RANKS --cpus-per-task=1 --nodelist=$nodelist \
    --distribution=arbitrary --exclusive --quiet --kill-on-bad-exit=1 $HELLO 2>&1) &&
    [[ \$(grep -c "sum $want_sum" <<<"\$out") == $RANKS ]] || crashed=\$((crashed + 1))
done
echo "\$crashed"
SCRIPT
chmod +x "$work/steps.sh"

for fence in "${FENCES[@]}"; do
  job=$(FENCE=$fence sbatch --parsable -N "$NODES" --exclusive -o "$work/$fence.out" -D "$work" "$work/steps.sh")
  while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 2; done
  line="$(date -u +%F) fence=$fence ranks=$RANKS nodes=$NODES: $(tail -n 1 "$work/$fence.out") of $RUNS steps crashed"
  echo "$line" | tee -a bench/results/mpi_startup.txt
done
