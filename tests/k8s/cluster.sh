#!/usr/bin/env bash
# A real Kubernetes 1.20 cluster of N virtual nodes on localhost, for the tests and by hand.
#
#   tests/k8s/cluster.sh start [NODES]   start (or reuse) etcd, apiserver, controller manager,
#                                        scheduler and NODES kubelets (default 2); returns when
#                                        every node is Ready and ServiceAccount default/default
#                                        has its token
#   tests/k8s/cluster.sh stop            delete all Pods, stop every daemon, undo what they left
#                                        outside the state dir
#   tests/k8s/cluster.sh status          daemons and node states; exit 1 when not running
#   tests/k8s/cluster.sh env             prints `export KUBECONFIG=...` for clients (eval it)
#   tests/k8s/cluster.sh import-image TAR NAME
#                                        imports the OCI image layout TAR into every node's
#                                        containerd as NAME:<its ref> (scripts/chorus-image.sh)
#
# Everything of ours lives under $CHORUS_K8S_DIR (default /tmp/chorus-k8s): pki, kubeconfigs,
# etcd data, per-node containerd/kubelet dirs, logs, pid files. Own sockets and ports only: a
# system containerd or etcd is never touched. Binaries come from the kit ($CHORUS_K8S_KIT,
# default <repo>/../shared/k8s), unpacked once into $CHORUS_K8S_CACHE. Exit code 77 means "no
# Kubernetes possible here" (tests skip). The settings follow shared/docs/LOCAL-K8S.md.
# Needs root, cgroup v1, and Debian's etcd-server containerd runc containernetworking-plugins
# iptables (installed when missing).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
KIT=${CHORUS_K8S_KIT:-$HERE/../../../shared/k8s}
CACHE=${CHORUS_K8S_CACHE:-/var/cache/chorus-k8s/bin}
DIR=${CHORUS_K8S_DIR:-/tmp/chorus-k8s}
PORT=${CHORUS_K8S_PORT:-16443}
ETCD_PORT=${CHORUS_K8S_ETCD_PORT:-16479}  # peer port is ETCD_PORT+1
KUBELET_PORT=${CHORUS_K8S_KUBELET_PORT:-10250}  # node k: KUBELET_PORT+10*(k-1), healthz 2 below
START_TIMEOUT=${CHORUS_K8S_START_TIMEOUT:-120}
PREFIX=chorus-k8s-n  # node names: chorus-k8s-n1, chorus-k8s-n2, ...
BRIDGE=chorusk8s     # CNI bridges: chorusk8s1, chorusk8s2, ... (<= 15 chars)
HOSTS_TAG="# chorus-k8s"
CNI_BIN=/usr/lib/cni
SERVER=https://127.0.0.1:$PORT

say() { echo "cluster.sh: $*" >&2; }
die() {
  say "$*"
  exit 1
}
skip() {
  say "skip: $*"
  exit 77
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }
pid_of() { [[ -s $1 ]] && cat "$1" || true; }
running() { pid_alive "$(pid_of "$DIR/run/$1.pid")"; }

log_tails() {
  local f
  for f in "$DIR"/log/*.log; do
    [[ -f $f ]] || continue
    echo "---- $f (last lines)" >&2
    tail -n 15 "$f" >&2
  done
}

# ---- binaries ---------------------------------------------------------------------------------

KBINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet pause)

# The cached binaries match SHA256SUMS. Checked once (3 s), then remembered in a stamp that any
# later change to a binary makes stale.
cache_ok() {
  local stamp=$CACHE/.verified
  [[ -s $CACHE/SHA256SUMS ]] || return 1
  if [[ -f $stamp ]] && [[ -z $(find "$CACHE" -maxdepth 1 -type f -newer "$stamp" 2>/dev/null) ]]; then
    return 0
  fi
  (cd "$CACHE" && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1) || return 1
  touch "$stamp"
}

# Unpacks the kit's .xz once into $CACHE (checked against SHA256SUMS), or builds from Debian's
# source package with the kit's recipe; exit 77 when neither is possible.
ensure_binaries() {
  cache_ok && return 0
  mkdir -p "$CACHE"
  if [[ -s $KIT/bin/SHA256SUMS ]] && [[ -f $KIT/bin/kubelet.xz ]]; then
    local b
    for b in "${KBINS[@]}"; do
      [[ -f $KIT/bin/$b.xz ]] || skip "kit $KIT lacks bin/$b.xz"
      xz -dc "$KIT/bin/$b.xz" >"$CACHE/$b.tmp" && mv "$CACHE/$b.tmp" "$CACHE/$b"
      chmod +x "$CACHE/$b"
    done
    cp "$KIT/bin/SHA256SUMS" "$CACHE/SHA256SUMS"
    cache_ok || die "binaries unpacked from $KIT do not match its SHA256SUMS"
    say "unpacked the kit's binaries into $CACHE"
  elif [[ -x $KIT/build-from-debian.sh ]]; then
    say "no kit binaries: building Kubernetes 1.20.2 from Debian sources into $CACHE (30-40 min)"
    "$KIT/build-from-debian.sh" "$CACHE" >"$CACHE/../build.log" 2>&1 ||
      skip "build-from-debian.sh failed (see $CACHE/../build.log)"
    (cd "$CACHE" && sha256sum "${KBINS[@]}" >SHA256SUMS)
  else
    skip "no Kubernetes kit at $KIT (set CHORUS_K8S_KIT) and no build recipe"
  fi
}

ensure_packages() {
  local missing=() p
  for p in etcd-server containerd runc containernetworking-plugins iptables; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || skip "missing packages ${missing[*]} and no apt-get"
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null || skip "cannot install ${missing[*]}"
}

ensure_images_kit() {
  [[ -f $KIT/images/pause.tar && -f $KIT/images/busybox.tar ]] && return 0
  [[ -x $KIT/make-images.sh ]] || skip "no images in $KIT/images and no make-images.sh"
  mkdir -p "$CACHE/../images"
  "$KIT/make-images.sh" "$CACHE/pause" "$CACHE/../images" >/dev/null
  KIT_IMAGES=$CACHE/../images
}

# ---- pki, tokens, kubeconfigs -----------------------------------------------------------------

make_pki() {
  local p=$DIR/pki
  [[ -s $p/ca.crt && -s $p/tokens.csv ]] && return 0
  mkdir -p "$p"
  (
    cd "$p"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj /CN=chorus-k8s-ca 2>/dev/null
    sign() { # sign NAME SUBJECT [SAN]
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      local ext=$1.ext
      if [[ -n ${3:-} ]]; then
        printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$3" >"$ext"
      else
        printf 'extendedKeyUsage=clientAuth\n' >"$ext"
      fi
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$ext" -out "$1.crt" 2>/dev/null
      rm -f "$1.csr" "$ext"
    }
    sign apiserver /CN=kube-apiserver \
      "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,IP:10.96.0.1"
    sign kubelet-client /CN=kube-apiserver-kubelet-client # bound to system:kubelet-api-admin
    sign admin-cert "/O=system:masters/CN=chorus-cert-admin"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # token,user,uid,"groups": admin is a master, limited has no binding at all (403 tests),
    # one token per node so that the Node authorizer sees system:node:NAME.
    {
      echo "$(openssl rand -hex 16),admin,admin,\"system:masters\""
      echo "$(openssl rand -hex 16),limited,limited"
      local k
      for k in $(seq 64); do
        echo "$(openssl rand -hex 16),system:node:$PREFIX$k,node$k,\"system:nodes\""
      done
    } >tokens.csv
    chmod 600 ./*.key tokens.csv
  )
}

token_of() { awk -F, -v u="$1" '$2 == u { print $1 }' "$DIR/pki/tokens.csv"; }

# kubeconfig FILE USER_YAML_LINES: server, CA inline, context chorus-test.
kubeconfig() {
  local out=$1 user=$2
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: chorus-test
  cluster:
    server: $SERVER
    certificate-authority-data: $(base64 -w0 "$DIR/pki/ca.crt")
users:
- name: chorus-test
  user:
$user
contexts:
- name: chorus-test
  context:
    cluster: chorus-test
    user: chorus-test
current-context: chorus-test
EOF
  chmod 600 "$out"
}

write_kubeconfigs() {
  kubeconfig "$DIR/kubeconfig" "    token: $(token_of admin)"
  kubeconfig "$DIR/kubeconfig-limited" "    token: $(token_of limited)"
  kubeconfig "$DIR/kubeconfig-cert" "    client-certificate-data: $(base64 -w0 "$DIR/pki/admin-cert.crt")
    client-key-data: $(base64 -w0 "$DIR/pki/admin-cert.key")"
}

# api METHOD PATH [curl args...]: the admin token, the CA; prints the body.
api() {
  local m=$1 path=$2
  shift 2
  curl -sS --max-time 10 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $(token_of admin)" \
    -X "$m" "$SERVER$path" "$@"
}

api_up() { [[ -s $DIR/pki/tokens.csv ]] && [[ $(api GET /readyz 2>/dev/null) == ok ]]; }

# ---- daemons ----------------------------------------------------------------------------------

# spawn NAME CMD...: in its own session, output to log/NAME.log, pid to run/NAME.pid.
spawn() {
  local name=$1
  shift
  running "$name" && return 0
  setsid "$@" </dev/null >>"$DIR/log/$name.log" 2>&1 &
  echo $! >"$DIR/run/$name.pid"
}

port_free() { ! ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }

wait_for() { # wait_for SECONDS WHAT CMD...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  while ((SECONDS < deadline)); do
    "$@" && return 0
    sleep 0.3
  done
  say "$what did not come up in time"
  log_tails
  exit 1
}

etcd_up() { curl -s --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'; }

start_control_plane() {
  local p=$DIR/pki
  if ! running etcd; then
    port_free "$ETCD_PORT" && port_free $((ETCD_PORT + 1)) ||
      die "port $ETCD_PORT or $((ETCD_PORT + 1)) is taken: set CHORUS_K8S_ETCD_PORT"
    spawn etcd etcd --name chorus --data-dir "$DIR/etcd" \
      --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
      --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
      --initial-cluster "chorus=http://127.0.0.1:$((ETCD_PORT + 1))"
  fi
  wait_for 30 etcd etcd_up
  if ! running kube-apiserver; then
    port_free "$PORT" || die "port $PORT is taken: set CHORUS_K8S_PORT"
    spawn kube-apiserver "$CACHE/kube-apiserver" \
      --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
      --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$PORT" --insecure-port=0 \
      --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
      --client-ca-file="$p/ca.crt" --token-auth-file="$p/tokens.csv" \
      --authorization-mode=Node,RBAC \
      --service-account-issuer=https://kubernetes.default.svc.cluster.local \
      --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
      --service-cluster-ip-range=10.96.0.0/16 \
      --endpoint-reconciler-type=none \
      --kubelet-preferred-address-types=Hostname \
      --kubelet-client-certificate="$p/kubelet-client.crt" --kubelet-client-key="$p/kubelet-client.key" \
      --allow-privileged=true --profiling=false --cert-dir="$DIR/apiserver"
  fi
  wait_for 60 kube-apiserver api_up
  # Pod logs/exec: the apiserver's kubelet client identity may call every kubelet API.
  api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings -H 'Content-Type: application/json' -d '{
    "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",
    "metadata":{"name":"chorus-kubelet-api-admin"},
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:kubelet-api-admin"},
    "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"kube-apiserver-kubelet-client"}]
  }' >/dev/null
  spawn kube-controller-manager "$CACHE/kube-controller-manager" \
    --kubeconfig="$DIR/kubeconfig" --controllers='*,-nodeipam' \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --leader-elect=false --port=0 --secure-port=0 --use-service-account-credentials=false
  spawn kube-scheduler "$CACHE/kube-scheduler" \
    --kubeconfig="$DIR/kubeconfig" --leader-elect=false --port=0 --secure-port=0
}

# The v1 cgroup controllers (mount points) the kubelet of a node needs its cgroup root in.
cgroup_mounts() { awk '$3 == "cgroup" { print $2 }' /proc/mounts; }
# Those and the hybrid's cgroup2 mount, where runc mirrors the Pod cgroups: all to clean at stop.
cgroup_all_mounts() { awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts; }

make_cgroup_root() {
  local name=$1 m
  for m in $(cgroup_mounts); do
    mkdir -p "$m/$name"
    if [[ -f $m/cpuset.cpus ]]; then
      cat "$m/cpuset.cpus" >"$m/$name/cpuset.cpus"
      cat "$m/cpuset.mems" >"$m/$name/cpuset.mems"
    fi
  done
}

containerd_up() { ctr -a "$1" version >/dev/null 2>&1; }

# Whether node NAME's mount namespace has its log folders bound (start_node).
node_mounts_up() {
  local p
  p=$(pid_of "$DIR/run/mounts-$1.pid")
  [[ -n $p ]] && grep -q " /var/log/containers " "/proc/$p/mountinfo" 2>/dev/null
}

start_node() {
  local k=$1 name=$PREFIX$1 n=$DIR/nodes/$PREFIX$1
  local sock=$n/containerd/containerd.sock kport=$((KUBELET_PORT + 10 * (k - 1)))
  mkdir -p "$n"/{containerd/root,containerd/state,cni/net.d,cni/ipam,kubelet,certs,volume-plugins}
  grep -q "^127.0.0.1 $name $HOSTS_TAG\$" /etc/hosts || echo "127.0.0.1 $name $HOSTS_TAG" >>/etc/hosts
  make_cgroup_root "$name"
  cat >"$n/cni/net.d/10-chorus.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "chorus-k8s-$k",
  "plugins": [
    { "type": "bridge", "bridge": "$BRIDGE$k", "isGateway": true, "ipMasq": false,
      "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$n/cni/ipam",
                "ranges": [[{ "subnet": "10.244.$k.0/24" }]], "routes": [{ "dst": "0.0.0.0/0" }] } }
  ]
}
EOF
  cat >"$n/containerd/config.toml" <<EOF
version = 2
root = "$n/containerd/root"
state = "$n/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:3.4"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$n/cni/net.d"
EOF
  # The node's containerd and kubelet share a mount namespace of their own in which
  # /var/log/pods and /var/log/containers are the node's folders: kubelet 1.20's container GC
  # deletes the log folder of every Pod it does not know (evictPodLogsDirectories), so two
  # kubelets sharing the host's /var/log/pods delete each other's running Pods' logs (a Pod's log
  # then reads "lstat /var/log/pods/...: no such file or directory"). A `sleep` holds the
  # namespace; both daemons enter it (nsenter execs them: the pid files stay theirs).
  mkdir -p "$n"/logs/{pods,containers} /var/log/pods /var/log/containers
  spawn "mounts-$name" unshare --mount --propagation private sh -c \
    "mount --bind '$n/logs/pods' /var/log/pods && mount --bind '$n/logs/containers' /var/log/containers && exec sleep infinity"
  wait_for 10 "the mount namespace of $name" node_mounts_up "$name"
  local ns
  ns=/proc/$(pid_of "$DIR/run/mounts-$name.pid")/ns/mnt
  spawn "containerd-$name" nsenter --mount="$ns" containerd --config "$n/containerd/config.toml"
  wait_for 30 "containerd of $name" containerd_up "$sock"
  local img
  for img in pause busybox; do
    [[ -f $n/containerd/imported-$img ]] && continue
    ctr -a "$sock" -n k8s.io images import --base-name "localhost/$img" \
      "${KIT_IMAGES:-$KIT/images}/$img.tar" >/dev/null
    touch "$n/containerd/imported-$img"
  done
  kubeconfig "$n/kubeconfig" "    token: $(token_of "system:node:$name")"
  cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $kport
healthzBindAddress: 127.0.0.1
healthzPort: $((kport - 2))
readOnlyPort: 0
cgroupDriver: cgroupfs
failSwapOn: false
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: "$DIR/pki/ca.crt" }
authorization:
  mode: Webhook
# Test images are imported, never pulled: image GC must not delete them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: { memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%" }
EOF
  spawn "kubelet-$name" nsenter --mount="$ns" "$CACHE/kubelet" --config="$n/kubelet.yaml" --kubeconfig="$n/kubeconfig" \
    --container-runtime=remote --container-runtime-endpoint="unix://$sock" \
    --hostname-override="$name" \
    --root-dir="$n/kubelet" --cert-dir="$n/certs" --volume-plugin-dir="$n/volume-plugins" \
    --cgroup-root="/$name"
}

node_ready() {
  api GET "/api/v1/nodes/$1" 2>/dev/null | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'
}

cluster_ready() {
  local nodes=$1 k
  for k in $(seq "$nodes"); do node_ready "$PREFIX$k" || return 1; done
  # ServiceAccount admission (1.20) refuses Pods until default has its token secret.
  api GET /api/v1/namespaces/default/serviceaccounts/default 2>/dev/null | tr -d ' \n' |
    grep -q '"secrets":\[{'
}

conf_nodes() { [[ -s $DIR/nodes.count ]] && cat "$DIR/nodes.count" || echo 0; }

any_running() {
  local f
  for f in "$DIR"/run/*.pid; do
    [[ -f $f ]] && pid_alive "$(pid_of "$f")" && return 0
  done
  return 1
}

cmd_start() {
  local nodes=${1:-2} t0=$SECONDS
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 64)) ||
    die "NODES must be a number from 1 to 64, got '$nodes'"
  [[ $(id -u) -eq 0 ]] || skip "needs root"
  [[ -d /sys/fs/cgroup/cpuset ]] || skip "needs cgroup v1 controllers under /sys/fs/cgroup"
  ensure_binaries
  ensure_packages
  ensure_images_kit
  if any_running; then
    if [[ $(conf_nodes) == "$nodes" ]]; then
      # What runs is kept (Pods, etcd data); a daemon that died (a test stopped the apiserver)
      # is started again below: spawn skips the running ones.
      say "running with $nodes nodes: reusing it, starting what is not running"
    else
      say "running with $(conf_nodes) nodes (or partly), $nodes wanted: restarting"
      cmd_stop
    fi
  elif [[ -d $DIR/run ]]; then
    cmd_stop >/dev/null 2>&1 # leftovers of a crashed run: start from a clean slate
  fi
  mkdir -p "$DIR"/{run,log}
  # A fresh cluster starts fresh logs (the last run's stay until then, for a look after stop).
  [[ -s $DIR/nodes.count ]] || rm -f "$DIR"/log/*.log
  echo "$nodes" >"$DIR/nodes.count"
  # What stop restores or removes only if we made it.
  if [[ ! -f $DIR/run/host.saved ]]; then
    {
      echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
      local d
      for d in /run/containerd /var/lib/cni /var/lib/kubelet /var/log/pods /var/log/containers; do
        [[ -e $d ]] && echo "existed=$d"
      done
      ip netns list 2>/dev/null | awk '{ print "netns=" $1 }'
    } >"$DIR/run/host.saved"
  fi
  make_pki
  write_kubeconfigs
  start_control_plane
  local k
  for k in $(seq "$nodes"); do start_node "$k"; done
  wait_for "$START_TIMEOUT" "the cluster ($nodes Ready nodes, default ServiceAccount)" \
    cluster_ready "$nodes"
  say "ready in $((SECONDS - t0)) s: $nodes nodes ${PREFIX}1..$nodes, $SERVER (export KUBECONFIG=$DIR/kubeconfig)"
}

# ---- stop -------------------------------------------------------------------------------------

# stop_pids GRACE PID...: TERM, wait up to GRACE s, then KILL.
stop_pids() {
  local grace=$1 p
  shift
  local pids=("$@")
  ((${#pids[@]} == 0)) && return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while ((SECONDS < deadline)); do
    local alive=()
    for p in "${pids[@]}"; do pid_alive "$p" && alive+=("$p"); done
    ((${#alive[@]} == 0)) && return 0
    pids=("${alive[@]}")
    sleep 0.2
  done
  for p in "${pids[@]}"; do
    say "pid $p did not stop after ${grace}s: SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
  done
}

stop_daemon() { # stop_daemon NAME GRACE
  local f=$DIR/run/$1.pid p
  p=$(pid_of "$f")
  pid_alive "$p" && stop_pids "$2" "$p"
  rm -f "$f"
}

delete_pods() {
  api_up || return 0
  local nss ns deadline=$((SECONDS + 30))
  nss=$(api GET /api/v1/pods | tr -d ' \n' | { grep -o '"namespace":"[^"]*"' || true; } |
    sort -u | cut -d'"' -f4)
  for ns in $nss; do
    api DELETE "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=1" >/dev/null 2>&1 || true
  done
  # The kubelets confirm each deletion after stopping its containers and sandbox (CNI DEL).
  while ((SECONDS < deadline)); do
    api GET /api/v1/pods 2>/dev/null | tr -d ' \n' | grep -q '"items":\[\]' && return 0
    sleep 0.5
  done
  say "Pods still listed after 30 s; stopping anyway"
}

# Every process left in a node's cgroup tree (containers, pause), killed.
kill_cgroup_procs() {
  local root=/sys/fs/cgroup/pids/$1 pids
  [[ -d $root ]] || return 0
  pids=$(find "$root" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
  [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
}

rm_cgroup_tree() { [[ -d $1 ]] && find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true; }

# Mounts under PATH, deepest first, lazily.
umount_under() {
  local m
  for m in $(awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

iptables_cleanup() {
  local ipt t c
  for ipt in iptables ip6tables; do
    command -v $ipt >/dev/null || continue
    for t in filter nat mangle; do
      { $ipt -t $t -S 2>/dev/null | grep -E '^-A [A-Z]+ .*-j KUBE-' || true; } | sed 's/^-A/-D/' |
        while read -r rule; do eval "$ipt -t $t $rule" 2>/dev/null || true; done
      for c in $($ipt -t $t -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        $ipt -t $t -F "$c" 2>/dev/null || true
      done
      for c in $($ipt -t $t -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        $ipt -t $t -X "$c" 2>/dev/null || true
      done
    done
  done
}

saved() { [[ -f $DIR/run/host.saved ]] && grep -qxF "$1" "$DIR/run/host.saved"; }

cmd_stop() {
  [[ $(id -u) -eq 0 ]] || die "run as root"
  # Controllers first, so that no Job or ReplicaSet replaces the Pods deleted next.
  stop_daemon kube-scheduler 10
  stop_daemon kube-controller-manager 10
  delete_pods
  local n name sock p
  for n in "$DIR"/nodes/*/; do
    [[ -d $n ]] || continue
    name=$(basename "$n")
    stop_daemon "kubelet-$name" 10
  done
  for n in "$DIR"/nodes/*/; do
    [[ -d $n ]] || continue
    name=$(basename "$n") sock=$n/containerd/containerd.sock
    if containerd_up "$sock"; then
      local t
      for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
        ctr -a "$sock" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1 || true
      done
    fi
    kill_cgroup_procs "$name"
    stop_daemon "containerd-$name" 10
    # The shims outlive containerd; ours are the ones given our socket.
    for p in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $sock( |\$)" || true); do
      stop_pids 5 "$p"
    done
    stop_daemon "mounts-$name" 5 # its namespace (and the mounts in it) goes with its last process
  done
  stop_daemon kube-apiserver 15
  stop_daemon etcd 10
  # A daemon of ours whose pid file went missing: one of our binaries given a path under $DIR.
  for p in $(pgrep -f -- "$DIR/" || true); do
    [[ $p != "$$" ]] && grep -qE '^(kube|etcd|containerd)' "/proc/$p/comm" 2>/dev/null &&
      stop_pids 5 "$p"
  done
  umount_under "$DIR"
  local m d
  for m in $(cgroup_all_mounts); do
    for d in "$m/$PREFIX"*; do rm_cgroup_tree "$d"; done
    rm_cgroup_tree "$m/kubepods"
    rm_cgroup_tree "$m/k8s.io"
  done
  for d in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | grep "^${BRIDGE}[0-9]*$" || true); do
    ip link del "$d" 2>/dev/null || true
  done
  for d in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ { print $1 }'); do
    saved "netns=$d" || ip netns delete "$d" 2>/dev/null || true
  done
  iptables_cleanup
  for d in /var/log/pods /var/log/containers /var/lib/kubelet /var/lib/cni /run/containerd; do
    saved "existed=$d" && continue
    umount_under "$d"
    rm -rf --one-file-system "$d"
  done
  rm -rf /var/lib/kubelet/device-plugins 2>/dev/null || true
  if [[ -f $DIR/run/host.saved ]]; then
    p=$(sed -n 's/^ip_forward=//p' "$DIR/run/host.saved")
    [[ -n $p ]] && echo "$p" >/proc/sys/net/ipv4/ip_forward
  fi
  if grep -q "$HOSTS_TAG\$" /etc/hosts; then
    # In place (not a new inode): /etc/hosts may be a bind mount.
    local h
    h=$(grep -v "$HOSTS_TAG\$" /etc/hosts || true)
    printf '%s\n' "$h" >/etc/hosts
  fi
  # Cluster data goes (a test cluster starts clean); logs stay for a look afterwards.
  if [[ -d $DIR ]]; then
    rm -rf --one-file-system "$DIR/nodes" "$DIR/etcd" "$DIR/run" "$DIR/apiserver" "$DIR/nodes.count"
  fi
  say "stopped"
}

cmd_status() {
  if ! running kube-apiserver || ! api_up; then
    echo "no cluster running under $DIR"
    exit 1
  fi
  echo "KUBECONFIG=$DIR/kubeconfig ($(conf_nodes) nodes, $SERVER)"
  local f
  for f in "$DIR"/run/*.pid; do
    echo "$(basename "$f" .pid): $(pid_alive "$(pid_of "$f")" && echo running || echo DEAD)"
  done
  local k
  for k in $(seq "$(conf_nodes)"); do
    echo "$PREFIX$k: $(node_ready "$PREFIX$k" && echo Ready || echo NotReady)"
  done
}

# Under its full name from the start (LOCAL-K8S.md: a bare name tagged later stays cached by the
# CRI as docker.io/library/...). Nodes are imported one by one; a failure names the node.
cmd_import_image() {
  local tar=${1:-} name=${2:-} n sock count=0
  [[ -f $tar && -n $name ]] || die "usage: $0 import-image TAR NAME (e.g. localhost/chorus)"
  running kube-apiserver || die "no cluster running under $DIR"
  for n in "$DIR"/nodes/*/; do
    [[ -d $n ]] || continue
    sock=$n/containerd/containerd.sock
    containerd_up "$sock" || die "the containerd of $(basename "$n") does not answer"
    ctr -a "$sock" -n k8s.io images import --base-name "$name" "$tar" >/dev/null ||
      die "importing $tar into $(basename "$n") failed"
    count=$((count + 1))
  done
  ((count > 0)) || die "no node to import into"
  say "imported $tar as $name into $count nodes"
}

case "${1:-}" in
  start) cmd_start "${2:-2}" ;;
  import-image) cmd_import_image "${2:-}" "${3:-}" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export KUBECONFIG=$DIR/kubeconfig" ;;
  *)
    echo "usage: $0 start [NODES] | stop | status | env | import-image TAR NAME" >&2
    exit 2
    ;;
esac
