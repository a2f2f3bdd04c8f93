#!/usr/bin/env bash
# End-to-end throughput and memory of the cisa-sim CLI, run as a user runs it (issue 12, bounds):
# sweeps of ~100K, ~1M and ~5M points to HDF5 (`--out x.h5`, the table on stdout) and to CSV
# (`--format csv --no-hdf5 > x.csv`), each under /usr/bin/time -v; prints points/s and max RSS per
# case, and the start-up RSS of `cisa-sim presets`.
#
#   scripts/bench_cli.sh [--smoke] [--sizes "100k 1m 5m"] [--dir DIR] [CISA_SIM]
#
# CISA_SIM defaults to build/release/cisa-sim. DIR (default: a new folder under $TMPDIR, removed
# at the end) holds the scenarios and outputs: the 5M-point HDF5 file is ~5.5 GB and its CSV
# ~6 GB, and the disk's write speed bounds the figures (a tmpfs such as /dev/shm measures the
# CPU side). --smoke: one 2,000-point sweep, for the test suite (checks the script, not speed).
# The last column gives the output's size (MB). The HDF5 columns that compress well are deflated
# (write_hdf5.cpp); CISA_H5_DEFLATE=0 in the environment writes them as before (a 1M-point file:
# 299 vs 772 MB).
# Not a unit test: the full run takes minutes.
set -euo pipefail

SIZES="100k 1m 5m"
DIR=""
SMOKE=0
EXE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1; SIZES="smoke" ;;
    --sizes) SIZES=$2; shift ;;
    --dir) DIR=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) EXE=$1 ;;
  esac
  shift
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXE=${EXE:-$ROOT/build/release/cisa-sim}
[ -x "$EXE" ] || { echo "bench_cli.sh: no cisa-sim at $EXE (build it, or name it)" >&2; exit 2; }
[ -x /usr/bin/time ] || command -v python3 >/dev/null ||
  { echo "bench_cli.sh: needs GNU time at /usr/bin/time (apt-get install time) or python3" >&2; exit 2; }
KEEP=1
if [ -z "$DIR" ]; then
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/cisa_bench_cli.XXXXXX")
  KEEP=0
fi
mkdir -p "$DIR"
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$DIR"; }
trap cleanup EXIT

# A terminal-prefill sweep (no duplicates): 10 x 10 x 10 x 10 x 10 = 100,000 points, x 10 prefill
# sizes = 1,000,000, x 5 selection overlaps = 5,000,000.
scenario() {  # scenario SIZE FILE
  local extra=""
  case "$1" in
    smoke) extra="" ;;
    100k) extra="" ;;
    1m) extra="  prefill_tokens: [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 6144, 8192]" ;;
    5m) extra="  prefill_tokens: [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 6144, 8192]
  selection_overlap: [0, 0.1, 0.2, 0.3, 0.4]" ;;
  esac
  local ctx="[131072, 262144, 393216, 524288, 655360, 786432, 917504, 1048576, 1179648, 1310720]"
  local batch="[1, 2, 4, 8, 16, 32, 48, 64, 96, 128]"
  [ "$1" = smoke ] && ctx="[131072, 262144]" && batch="[1, 2]"
  cat >"$2" <<EOF
name: bench_cli_$1
model: inkling_small
tp: 8
hardware: h200_sxm
basis: calibrated
cisa: {chunk: 16, window: 128, budget: 4096, G: 16}
workload: {phase: terminal_prefill, context: 1048576, batch: 16, prefill_tokens: 512}
sweep:
  context: $ctx
  batch: $batch
  budget: [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144]
  G: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
  window: [0, 16, 32, 64, 128, 192, 256, 384, 512, 1024]
$extra
EOF
}

# Runs "$@" under /usr/bin/time -v; sets WALL (s) and RSS (MB).
timed() {
  local log="$DIR/time.log"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$log" "$@"
  else  # the same two lines from python3 (machines without GNU time)
    python3 -c '
import resource, subprocess, sys, time
t = time.monotonic(); rc = subprocess.call(sys.argv[2:]); w = time.monotonic() - t
with open(sys.argv[1], "w") as f:
    f.write("Elapsed (wall clock) time (h:mm:ss or m:ss): 0:%.2f\n" % w)
    f.write("Maximum resident set size (kbytes): %d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$log" "$@"
  fi
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$log")
  RSS=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$log")
}

points_of() {  # the points a scenario has, from the HDF5 file's attribute printed by the run
  sed -n 's/^\([0-9][0-9]*\) points.*/\1/p' "$1" | tail -1
}

echo "cisa-sim CLI benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
echo "binary: $EXE ($("$EXE" --version 2>/dev/null | head -1 || echo "version unknown"))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)"
echo "output folder: $DIR ($(df -PT "$DIR" | awk 'NR == 2 {print $2}'))"
echo "threads: ${CISA_THREADS:-all cores (at most 16)}; HDF5 deflate: ${CISA_H5_DEFLATE:-on (default)}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
timed "$EXE" presets >/dev/null
printf '%-34s %10s %12s %10s %9s\n' "case" "wall s" "points/s" "max RSS MB" "out MB"
printf '%-34s %10s %12s %10s %9s\n' "presets (start-up)" "$WALL" "-" "$RSS" "-"
for size in $SIZES; do
  scenario "$size" "$DIR/s_$size.yaml"
  timed "$EXE" --scenario "$DIR/s_$size.yaml" --out "$DIR/x_$size.h5" >"$DIR/table_$size.txt"
  n=$(points_of "$DIR/table_$size.txt")
  mb=$(awk -v b="$(wc -c <"$DIR/x_$size.h5")" 'BEGIN {printf "%.0f", b / 1e6}')
  printf '%-34s %10s %12s %10s %9s\n' "$size: $n points -> HDF5 (+table)" "$WALL" "$(awk -v n="$n" -v w="$WALL" 'BEGIN {printf "%.0f", n / (w > 0 ? w : 0.01)}')" "$RSS" "$mb"
  rm -f "$DIR/x_$size.h5"
  timed "$EXE" --scenario "$DIR/s_$size.yaml" --format csv --no-hdf5 >"$DIR/x_$size.csv"
  rows=$(($(wc -l <"$DIR/x_$size.csv") - 1))
  mb=$(awk -v b="$(wc -c <"$DIR/x_$size.csv")" 'BEGIN {printf "%.0f", b / 1e6}')
  [ "$rows" = "$n" ] || { echo "bench_cli.sh: CSV has $rows rows, the run said $n points" >&2; exit 1; }
  printf '%-34s %10s %12s %10s %9s\n' "$size: $n points -> CSV" "$WALL" "$(awk -v n="$n" -v w="$WALL" 'BEGIN {printf "%.0f", n / (w > 0 ? w : 0.01)}')" "$RSS" "$mb"
  rm -f "$DIR/x_$size.csv"
done
