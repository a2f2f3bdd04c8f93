#!/usr/bin/env bash
# Issue 12: builds the libFuzzer harnesses with clang (preset `fuzz`: ASan + UBSan + libFuzzer)
# and runs each for FUZZ_SECONDS (default 60) from its committed corpus (tests/fuzz/corpus/<h>/).
# New inputs go to build/fuzz/new/<h>/ (the committed corpus is not changed); a crash is saved in
# build/fuzz/artifacts/<h>/ and fails the script: copy it into tests/fuzz/crashes/<h>/, where the
# ci and asan presets replay it as a regression test, and fix the code.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found (scripts/install-deps.sh installs clang); skipped" >&2
  exit 0
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)" --target fuzz_scenario fuzz_set fuzz_hdf5
status=0
for h in scenario set hdf5; do
  new=build/fuzz/new/$h art=build/fuzz/artifacts/$h/
  rm -rf "$new" "$art" && mkdir -p "$new" "$art"
  log=build/fuzz/$h.log
  # Leaks are checked by the replays under the asan preset: LeakSanitizer's whole-heap scans make
  # a long fuzzing run crawl. `timeout`: a hang can never stall CI.
  if ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=64 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     timeout $((seconds + 180)) build/fuzz/tests/fuzz/fuzz_$h -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 \
       -malloc_limit_mb=1024 -max_len=16384 \
       -artifact_prefix="$art" -print_final_stats=1 "$new" "tests/fuzz/corpus/$h" >"$log" 2>&1; then
    crashes=0
  else
    crashes=1 status=1
    tail -40 "$log" >&2
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz $h: runs=${runs:-?} crashes=$crashes seconds=$seconds (new inputs: $(ls "$new" | wc -l); artifacts: $(ls "$art" | wc -l))"
done
exit $status
