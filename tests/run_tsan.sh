#!/usr/bin/env bash
# ThreadSanitizer run of the threaded code: the coordinator, the agents (in-process threads and
# `chorus agent` processes over ZeroMQ), the in-process launcher, a served instance (its socket
# loop beside its coordinator's thread, as `chorus serve` processes), and the Kubernetes
# launcher (its request worker, watch and log streams beside the coordinator) against the real
# local cluster, where tests/k8s/cluster.sh can start one (K8S=0 skips it). Not in the ctest suite: a TSan
# build is a second full build of the libraries and tests, which does not fit the suite's
# 30-minute budget on 2 cores beside the Release build (tests/README.md has the figures).
#
#   tests/run_tsan.sh            # configure + build build-tsan/, run the cases, exit 1 on a report
#   BUILD_DIR=/tmp/tsan JOBS=2 tests/run_tsan.sh
#
# Exit status: 0 clean, 1 a test failed or TSan reported a race (the reports are in
# $BUILD_DIR/tsan-logs/), 2 the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD_DIR=${BUILD_DIR:-build-tsan}
JOBS=${JOBS:-2}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# -O1: TSan's own guidance (fast enough, stacks still exact); Debug keeps assertions on.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
  -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCHORUS_TSAN=ON -DCHORUS_BUILD_BENCH=OFF "${launcher[@]}" \
  >/dev/null || exit 2
start=$(date +%s)
K8S=${K8S:-1}
targets=(chorus test_runtime test_adapters test_integration)
[[ $K8S == 1 ]] && targets+=(test_k8s)
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${targets[@]}" || exit 2
echo "run_tsan: build took $(($(date +%s) - start)) s"

logs="$BUILD_DIR/tsan-logs"
rm -rf "$logs" && mkdir -p "$logs"
# log_path: one file per process (the CLI and agents the integration test starts included),
# so a report from a child process is not lost in captured output.
export TSAN_OPTIONS="suppressions=$SRC/tests/tsan.supp log_path=$SRC/$logs/tsan second_deadlock_stack=1 history_size=4"
status=0
start=$(date +%s)
run() {
  echo "run_tsan: $*"
  "$@" || status=1
}
run "$BUILD_DIR/tests/test_runtime" -tc='Runtime.Coordinator.*,Runtime.Agent*,Runtime.Netprobe.Prober*'
run "$BUILD_DIR/tests/test_adapters" -tc='Adapters.Inproc.*'
run "$BUILD_DIR/tests/test_integration" -tc='Integration.Agents.*,Integration.Serve.*'
if [[ $K8S == 1 ]]; then
  # The chorus submit cases are left out: their coordinator runs inside a Pod, out of TSan's
  # sight, from an image of this (TSan) build.
  exec 9>/tmp/chorus-k8s.lock
  flock 9
  tests/k8s/cluster.sh start
  case $? in
    0)
      trap 'tests/k8s/cluster.sh stop' EXIT
      run "$BUILD_DIR/tests/test_k8s" -tce='K8s.Submit.*'
      ;;
    77) echo "run_tsan: no Kubernetes kit here: the K8s cases are skipped" ;;
    *) echo "run_tsan: the test cluster did not start"; status=1 ;;
  esac
fi
echo "run_tsan: tests took $(($(date +%s) - start)) s"
if compgen -G "$logs/tsan.*" >/dev/null; then
  echo "run_tsan: ThreadSanitizer reports:"
  grep -h "^WARNING: ThreadSanitizer\|^SUMMARY" "$logs"/tsan.* | sort | uniq -c
  status=1
fi
[[ $status -eq 0 ]] && echo "run_tsan: clean"
exit $status
