#!/usr/bin/env bash
# A real Slurm 22.05 cluster of N virtual nodes on localhost, for the tests and by hand.
#
#   tests/slurm/cluster.sh start [NODES]   start (or reuse) a cluster of NODES x 4 CPUs (default 4);
#                                          returns when every node is idle
#   tests/slurm/cluster.sh stop            cancel its jobs, stop its daemons (and munged if we
#                                          started it)
#   tests/slurm/cluster.sh status          daemons and node states; exit 1 when not running
#   tests/slurm/cluster.sh env             prints `export SLURM_CONF=...` for clients (eval it)
#
# Everything lives under $CHORUS_SLURM_DIR (default /tmp/chorus-slurm): etc/slurm.conf, state,
# spool, logs, pid files. Nothing is written to /etc/slurm: the daemons, and every client (sinfo,
# sbatch, libslurm, chorus), find the configuration through SLURM_CONF=$CHORUS_SLURM_DIR/etc/slurm.conf,
# so this cluster never fights with a system one. Jobs inherit SLURM_CONF from the submitter's
# environment. Ports: controller $CHORUS_SLURM_CTLD_PORT (6817), nodes from $CHORUS_SLURM_NODE_PORT
# (17001) upwards; all on 127.0.0.1.
#
# Idempotent: `start` on a running cluster of the same size only waits for it; of another size it
# restarts it. The controller starts with -c (no saved jobs or node states): a test cluster starts
# clean. Needs root (SlurmUser=root), munge and the Debian packages of scripts/setup.sh; no systemd.
set -euo pipefail

DIR=${CHORUS_SLURM_DIR:-/tmp/chorus-slurm}
CTLD_PORT=${CHORUS_SLURM_CTLD_PORT:-6817}
NODE_PORT=${CHORUS_SLURM_NODE_PORT:-17001}
START_TIMEOUT=${CHORUS_SLURM_START_TIMEOUT:-30}
CONF=$DIR/etc/slurm.conf
export SLURM_CONF=$CONF

say() { echo "cluster.sh: $*" >&2; }
die() {
  say "$*"
  exit 1
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }
pid_of() { [[ -s $1 ]] && cat "$1" || true; }

# The tail of every log of ours, for a start that did not come up.
log_tails() {
  local f
  for f in "$DIR"/log/*.log; do
    [[ -f $f ]] || continue
    echo "---- $f (last lines)" >&2
    tail -n 15 "$f" >&2
  done
}

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  munge_works && return 0
  command -v munged >/dev/null || die "munged not found: install the munge package (scripts/setup.sh)"
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged
  touch "$DIR/munged.ours"  # so that `stop` stops it, and only if we started it
  local i
  for i in $(seq 50); do
    munge_works && return 0
    sleep 0.1
  done
  die "munged did not come up: $(tail -n 5 /var/log/munge/munged.log 2>/dev/null)"
}

write_conf() {
  local nodes=$1 out=$2 last_port=$((NODE_PORT + $1 - 1))
  local node_range="n[1-$nodes]" port_range="[$NODE_PORT-$last_port]"
  if ((nodes == 1)); then
    node_range=n1
    port_range=$NODE_PORT
  fi
  cat >"$out" <<EOF
# Written by tests/slurm/cluster.sh: $nodes virtual nodes on localhost.
ClusterName=chorus
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=$CTLD_PORT
SlurmdPort=$NODE_PORT
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmdLogFile=$DIR/log/slurmd-%n.log
TmpFS=$DIR/tmp/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
PlugStackConfig=$DIR/etc/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
InactiveLimit=0
MinJobAge=300
# Job arrays of the benchmark's size (bench/agents: 5,000 tasks), several runs in a row.
MaxArraySize=10001
MaxJobCount=100000
KillWait=5
Waittime=0
NodeName=$node_range NodeHostname=localhost NodeAddr=127.0.0.1 Port=$port_range CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

# Node count of the written configuration (0 when there is none).
conf_nodes() {
  [[ -f $CONF ]] || {
    echo 0
    return
  }
  sed -n 's/^# Written by tests\/slurm\/cluster.sh: \([0-9]*\) virtual nodes.*/\1/p' "$CONF"
}

ctld_running() { pid_alive "$(pid_of "$DIR/run/slurmctld.pid")"; }

all_idle() {
  local nodes=$1 states
  states=$(sinfo -h -N -o '%N %T' 2>/dev/null) || return 1
  [[ $(grep -c ' idle$' <<<"$states") -eq $nodes ]]
}

wait_ready() {
  local nodes=$1 deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    all_idle "$nodes" && return 0
    sleep 0.2
  done
  say "the cluster is not ready after ${START_TIMEOUT}s (want $nodes idle nodes); sinfo says:"
  sinfo -N -o '%N %T %E' >&2 || true
  log_tails
  exit 1
}

start_slurmds() {
  local nodes=$1 k
  for k in $(seq "$nodes"); do
    pid_alive "$(pid_of "$DIR/run/slurmd-n$k.pid")" && continue
    mkdir -p "$DIR/spool/n$k" "$DIR/tmp/n$k"
    slurmd -N "n$k" -f "$CONF" || {
      log_tails
      die "slurmd -N n$k failed to start"
    }
  done
}

cmd_start() {
  local nodes=${1:-4}
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 256)) ||
    die "NODES must be a number from 1 to 256, got '$nodes'"
  [[ $(id -u) -eq 0 ]] || die "run as root (the test cluster uses SlurmUser=root)"
  local bin
  for bin in slurmctld slurmd sinfo scontrol munge; do
    command -v $bin >/dev/null || die "$bin not found: run scripts/setup.sh (packages slurm-wlm munge)"
  done
  mkdir -p "$DIR"/{etc,state,spool,run,log,tmp}
  if ctld_running; then
    # The same size and the configuration this script writes today: reuse it.
    local want
    want=$(mktemp)
    write_conf "$nodes" "$want"
    if cmp -s "$want" "$CONF"; then
      rm -f "$want"
      start_munge
      start_slurmds "$nodes"
      wait_ready "$nodes"
      say "running: $nodes nodes (SLURM_CONF=$CONF)"
      return 0
    fi
    rm -f "$want"
    say "running with $(conf_nodes) nodes or another configuration, $nodes nodes wanted: restarting"
    cmd_stop
    mkdir -p "$DIR"/{etc,state,spool,run,log,tmp}
  fi
  start_munge
  write_conf "$nodes" "$CONF"
  : >"$DIR/etc/plugstack.conf"
  if ss -ltn "sport = :$CTLD_PORT" 2>/dev/null | grep -q LISTEN; then
    die "port $CTLD_PORT is taken by another program (another slurmctld?): set CHORUS_SLURM_CTLD_PORT"
  fi
  slurmctld -c -f "$CONF" || {
    log_tails
    die "slurmctld failed to start"
  }
  start_slurmds "$nodes"
  wait_ready "$nodes"
  say "ready: $nodes nodes x 4 CPUs, partition debug (export SLURM_CONF=$CONF)"
}

cmd_stop() {
  local pids=() f p
  if ctld_running; then
    # Jobs first, so that no slurmstepd outlives its slurmd; bounded wait for them to end.
    scancel --full -u root 2>/dev/null || true
    local deadline=$((SECONDS + 15))
    while ((SECONDS < deadline)); do
      [[ -z $(squeue -h -t RUNNING,COMPLETING,SUSPENDED -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  for f in "$DIR"/run/*.pid; do
    [[ -f $f ]] || continue
    p=$(pid_of "$f")
    pid_alive "$p" && pids+=("$p")
  done
  local i
  for i in $(seq 50); do
    local alive=()
    for p in "${pids[@]}"; do pid_alive "$p" && alive+=("$p"); done
    pids=("${alive[@]}")
    ((${#pids[@]} == 0)) && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do
    say "pid $p did not stop after 10 s: SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -f "$DIR"/run/*.pid
  if [[ -f $DIR/munged.ours ]]; then
    p=$(pid_of /run/munge/munged.pid)
    pid_alive "$p" && kill "$p"
    rm -f "$DIR/munged.ours"
  fi
  say "stopped"
}

cmd_status() {
  if ! ctld_running; then
    echo "no cluster running under $DIR"
    exit 1
  fi
  echo "SLURM_CONF=$CONF ($(conf_nodes) nodes)"
  munge_works && echo "munge: ok" || echo "munge: NOT WORKING"
  sinfo -N -o '%N %T %C' || exit 1
}

case "${1:-}" in
  start) cmd_start "${2:-4}" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *)
    echo "usage: $0 start [NODES] | stop | status | env" >&2
    exit 2
    ;;
esac
