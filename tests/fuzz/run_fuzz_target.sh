#!/bin/sh
# Runs one libFuzzer target for ctest (tests/fuzz/CMakeLists.txt) or by hand.
#   run_fuzz_target.sh replay BINARY FUZZ_SRC_DIR TARGET WORK_DIR
#     every file of regressions/TARGET/ and corpus/TARGET/ once; fails on any crash.
#   run_fuzz_target.sh fuzz BINARY FUZZ_SRC_DIR TARGET WORK_DIR SECONDS
#     fuzzes for SECONDS from corpus/TARGET/ (with dicts/TARGET.dict if present). New inputs go to
#     WORK_DIR/new (the committed corpus is never written); a crash, leak, UBSan report, OOM or
#     timeout fails the run and leaves its input in WORK_DIR/artifacts/, named in the log.
# The seed is fixed (CHORUS_FUZZ_SEED overrides it) so a CI failure reruns the same way.
set -eu
mode=$1 bin=$2 src=$3 target=$4 work=$5
corpus=$src/corpus/$target
regressions=$src/regressions/$target
mkdir -p "$work/new" "$work/artifacts"
# Bounds: a reader may use a few hundred MB; more is an OOM finding, not a reason to swap.
limits="-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

case $mode in
replay)
  files=$(find "$regressions" "$corpus" -type f ! -name README.md 2>/dev/null | sort)
  [ -n "$files" ] || { echo "no inputs for $target"; exit 0; }
  # shellcheck disable=SC2086 # the file names are ours (hashes and finding names): no spaces
  if "$bin" $limits -artifact_prefix="$work/artifacts/" $files >"$work/replay.log" 2>&1; then
    echo "$target: $(echo "$files" | wc -l) inputs replayed clean"
    exit 0
  fi
  # One process per file now, so that one failing input does not hide the ones after it.
  status=0
  for f in $files; do
    if ! "$bin" $limits -artifact_prefix="$work/artifacts/" "$f" >"$work/replay.log" 2>&1; then
      cat "$work/replay.log"
      echo "FAILED: $f (replay: $bin $f)"
      status=1
    fi
  done
  exit $status
  ;;
fuzz)
  seconds=$6
  dict=""
  [ -f "$src/dicts/$target.dict" ] && dict="-dict=$src/dicts/$target.dict"
  # A fresh start each time: the same seed then fuzzes the same way on every run.
  rm -rf "$work/artifacts" "$work/new" && mkdir -p "$work/artifacts" "$work/new"
  if "$bin" $limits $dict -max_total_time="$seconds" -seed="${CHORUS_FUZZ_SEED:-12}" \
      -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/new" "$corpus"; then
    exit 0
  fi
  echo "FUZZ FAILURE in $target; reproducer(s):"
  for f in "$work/artifacts"/*; do
    [ -e "$f" ] && echo "  $f   (replay: $bin $f; keep it as $regressions/<name>)"
  done
  exit 1
  ;;
*)
  echo "usage: $0 replay|fuzz BINARY FUZZ_SRC_DIR TARGET WORK_DIR [SECONDS]" >&2
  exit 2
  ;;
esac
