#!/usr/bin/env bash
# Puts the digits data set (1,797 x 64, sklearn's digits.csv.gz as Debian 12's python3-sklearn
# ships it) into DEST/digits.csv, without installing the package: apt-get download + dpkg-deb -x
# in a temporary folder. Idempotent; needs only Debian's mirror.
#   scripts/fetch_digits.sh DEST
set -euo pipefail
dest=${1:?usage: fetch_digits.sh DEST}
[[ -s "$dest/digits.csv" ]] && exit 0
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)  # the work below happens in a temporary folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
if ! apt-get download python3-sklearn >download.log 2>&1; then
  cat download.log >&2
  echo "fetch_digits: 'apt-get download python3-sklearn' failed (is Debian's mirror reachable? try 'apt-get update')" >&2
  exit 1
fi
dpkg-deb -x python3-sklearn_*.deb unpacked
gz=$(find unpacked -name digits.csv.gz | head -1)
[[ -n "$gz" ]] || { echo "fetch_digits: digits.csv.gz is not in the python3-sklearn package" >&2; exit 1; }
gunzip -c "$gz" >"$dest/digits.csv.part"
mv "$dest/digits.csv.part" "$dest/digits.csv"
