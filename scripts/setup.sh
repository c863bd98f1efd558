#!/usr/bin/env bash
# Installs what Chorus needs on Debian 12 (idempotent, quiet when all is there) and builds it.
#   scripts/setup.sh            install + Release build in build/
#   scripts/setup.sh --example  ... then run the flagship example
#   scripts/setup.sh --test     ... then run the whole test suite (what .ci/run calls)
#   BUILD_DIR, BUILD_TYPE, CHORUS_SANITIZE=ON override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev libsqlite3-dev sqlite3 doctest-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libzmq3-dev cppzmq-dev libre2-dev
  libopenmpi-dev openmpi-bin libpmix-dev
  procps python3 coinor-libcbc-dev chromium
  slurm-wlm slurmctld slurmd slurm-client libslurm-dev munge
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

case "${1:-}" in
  --example) exec "$BUILD_DIR"/examples/hybrid/run_hybrid.sh ;;
  --test) cd "$BUILD_DIR" && exec ctest --output-on-failure --timeout 600 -j2 ;;
  "") ;;
  *) echo "setup: unknown option '$1' (use --example or --test)" >&2; exit 2 ;;
esac
