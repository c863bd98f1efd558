#!/usr/bin/env bash
# run_coupling.sh BIN_DIR [N] [REPEATS]: the coupling benchmark by hand, without Chorus. Starts
# coupling_echo on tcp://127.0.0.1 (a free port) and on an ipc:// socket, runs coupling_client
# REPEATS times (default 3) with N round trips (default 20000) against each, and prints one JSON
# line per client run, labelled with the transport.
set -euo pipefail
bin="$(cd "$1" && pwd)"
n="${2:-20000}"
repeats="${3:-3}"
tmp="$(mktemp -d /tmp/coupling.XXXXXX)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for bind in "tcp://127.0.0.1:*" "ipc://$tmp/echo.ipc"; do
  "$bin/coupling_echo" "$bind" >"$tmp/echo.out" 2>"$tmp/echo.err" &
  pid=$!
  for _ in $(seq 100); do grep -q '^listening on' "$tmp/echo.out" && break; sleep 0.05; done
  endpoint="$(sed -n 's/^listening on //p' "$tmp/echo.out")"
  [ -n "$endpoint" ] || { echo "coupling_echo did not start: $(cat "$tmp/echo.err")" >&2; exit 1; }
  for _ in $(seq "$repeats"); do
    echo "{\"transport\":\"${bind%%:*}\",\"result\":$("$bin/coupling_client" --endpoint "$endpoint" -n "$n")}"
  done
  kill -TERM "$pid"
  wait "$pid"
  pid=""
done
