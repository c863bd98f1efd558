#!/usr/bin/env bash
# Installs what Chorus needs on Debian 12 (idempotent, quiet when all is there) and builds it.
#   scripts/setup.sh            install + Release build in build/
#   scripts/setup.sh --example  ... then run the flagship example
#   scripts/setup.sh --test     ... then run the whole test suite (what .ci/run calls)
#   BUILD_DIR, BUILD_TYPE, CHORUS_SANITIZE=ON override the defaults.
#   --test also builds the readers' libFuzzer targets with clang in FUZZ_DIR (default build-fuzz)
#   and runs their bounded fuzz tests (ctest label fuzz, tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev libsqlite3-dev sqlite3 doctest-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libzmq3-dev cppzmq-dev libre2-dev libxgboost-dev libeigen3-dev iproute2
  libopenmpi-dev openmpi-bin libpmix-dev
  procps python3 coinor-libcbc-dev chromium
  slurm-wlm slurmctld slurmd slurm-client libslurm-dev munge
  clang-14 libclang-rt-14-dev
  libcurl4-openssl-dev
  # The local Kubernetes cluster of tests/k8s/cluster.sh (binaries from ../shared/k8s).
  etcd-server containerd runc containernetworking-plugins umoci busybox-static iptables openssl curl
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
SANITIZE=${CHORUS_SANITIZE:-OFF}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCHORUS_SANITIZE="$SANITIZE" >/dev/null
cmake --build "$BUILD_DIR"
# The digits data set of the quorum training workload (schedulers/quorum/sgd/digits.hpp).
scripts/fetch_digits.sh "$BUILD_DIR/data"

# The libFuzzer targets: clang 14 with ASan+UBSan, only the readers' libraries (CHORUS_FUZZ).
fuzz_build() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHORUS_FUZZ=ON \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" >/dev/null
  cmake --build "$FUZZ_DIR"
}
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}

case "${1:-}" in
  --example) exec "$BUILD_DIR"/examples/hybrid/run_hybrid.sh ;;
  --test)
    fuzz_build
    status=0
    (cd "$BUILD_DIR" && ctest --output-on-failure --timeout 600 -j2) || status=1
    (cd "$FUZZ_DIR" && ctest --output-on-failure --timeout 600 -j2 -L fuzz) || status=1
    exit $status ;;
  "") ;;
  *) echo "setup: unknown option '$1' (use --example or --test)" >&2; exit 2 ;;
esac
