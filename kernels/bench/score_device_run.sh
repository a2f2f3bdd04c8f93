#!/usr/bin/env bash
# Issue 14 session 7 (scoring helper): one device call = build this tree (and the benchmark of each
# OLD_TREES="name=path ..." tree beside it; OLD_TREE=path is "old=path"), the GPU tests (defaults,
# then each of TEST_ENVS), then benchmark variants in the same call: VARIANTS="label:ENV=1,ENV2=0:case,case
# ..." (a label is a tree name and a digit or nothing, e.g. old1 runs tree old's binary; other labels run
# this tree's; an empty case list means CASES), NCU_CASES="case:kernel_regex ...", SAN="memcheck ..."
# (SAN_KERNEL: kernel-name substring, default score; empty: every kernel). Run from the repo root of a copy holding kernels/ and tests/.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
BK=${BK:-/tmp/bk_score}
S="$OUT/summary.txt"
t0=$(date +%s)
log() { echo "== $* ($(( $(date +%s) - t0 )) s)" | tee -a "$S"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
TREES="${OLD_TREES:-}"; [ -n "${OLD_TREE:-}" ] && TREES="old=$OLD_TREE $TREES"
pids=""
for tr in $TREES; do
  n=${tr%%=*}; d=${tr#*=}
  ( cmake -S "$d/kernels" -B "${BK}_$n" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON \
      > /tmp/build_$n.log 2>&1 && cmake --build "${BK}_$n" -j4 --target cisa_kernel_bench >> /tmp/build_$n.log 2>&1 ) &
  pids="$pids $!"
done
cmake -S kernels -B "$BK" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
  > /tmp/build_score.log 2>&1 && cmake --build "$BK" -j16 >> /tmp/build_score.log 2>&1
rc=$?
for p in $pids; do wait $p; log "tree build (pid $p) rc=$?"; done
grep -A2 -E "Compiling entry function .*score" /tmp/build_score.log | grep -oE "score_[a-z_]+kernelILi[0-9]ELi[0-9]ELi[0-9]|Used [0-9]+ registers|[0-9]+ bytes spill stores" | paste -sd' ' >> "$S"
log "build rc=$rc"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED|Error" /tmp/build_score.log | head -60; exit 1; }
$BK/kernels_gpu_test > "$OUT/gpu_test.log" 2>&1
log "gpu_test rc=$? $(tail -1 "$OUT/gpu_test.log")"
grep -E "^scoring long|FAIL" "$OUT/gpu_test.log" | cut -c1-160 >> "$S"
for e in ${TEST_ENVS:-}; do
  env ${e//,/ } $BK/kernels_gpu_test > /tmp/gt_env.log 2>&1
  log "gpu_test ($e) rc=$? $(tail -1 /tmp/gt_env.log)"
  grep -E "^scoring long|FAIL" /tmp/gt_env.log | cut -c1-160 >> "$S"
done
for v in ${VARIANTS:-default::}; do
  label=${v%%:*}; rest=${v#*:}; envs=${rest%%:*}; cases=${rest#*:}
  [ -z "$cases" ] && cases=${CASES:-score_prefill_inkling_b16_p512_g4}
  tn=${label%%[0-9]*}; bin=$BK/cisa_kernel_bench; [ -x "${BK}_$tn/cisa_kernel_bench" ] && [ -n "$TREES" ] && bin=${BK}_$tn/cisa_kernel_bench
  env ${envs//,/ } $bin --csv "/tmp/ab_$label.csv" --cases "$cases" > /tmp/ab.log 2>&1
  log "bench $label ($envs) rc=$?"
  grep -E "^(score|cisa_step)" /tmp/ab.log | grep -vE ":(parts|upload|stream|reserve)" | sed -E 's/ +/ /g' | cut -c1-150 >> "$S"
  { echo "### $label ($envs)"; cat /tmp/ab.log; } >> "$OUT/bench_all.log"
  sed "s/^/$label,/" "/tmp/ab_$label.csv" >> "$OUT/bench_all.csv"
done
for nc in ${NCU_CASES:-}; do
  timeout 120 ncu --clock-control none -k regex:${nc#*:} -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
    --metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,dram__bytes_read.sum,dram__bytes_write.sum \
    $BK/cisa_kernel_bench --csv /tmp/ncu.csv --cases ${nc%%:*} > "$OUT/ncu_${nc%%:*}.txt" 2>&1
  log "ncu ${nc} rc=$?"
  grep -E "Duration|DRAM Throughput|Memory Throughput|sm__cycles_active|dram__bytes" "$OUT/ncu_${nc%%:*}.txt" | head -12 >> "$S"
done
for tool in ${SAN:-}; do
  kf=""; [ "${SAN_KERNEL-score}" != "" ] && kf="--kernel-name kns=${SAN_KERNEL-score}"
  timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool $kf --error-exitcode 9 \
    $BK/kernels_gpu_test 1 > /tmp/san_$tool.log 2>&1
  log "compute-sanitizer $tool (${SAN_KERNEL-score}) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san_$tool.log | tr '\n' ' ')"
  grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san_$tool.log >> "$OUT/sanitize_findings.txt"
done
cat "$S"
