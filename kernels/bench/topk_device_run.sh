#!/usr/bin/env bash
# Issue 14 session 6 (top-k helper): one device call = build, GPU tests (default plan and with the
# listed env variants), the top-k benchmark cases under each variant (A/B, same binary), then
# compute-sanitizer restricted to the top-k kernels (SAN_KERNEL: another kernel-name substring).
# Usage (repo root or a copy of kernels/ beside tests/): TOPK_VARIANTS="label:ENV=1,ENV2=0 ..."
#   SAN="memcheck racecheck synccheck" TEST_ENVS="A=1 B=2" BENCH_CASES=... NCU_CASES="case:kernel_regex ..."
#   OLD_TREE=path STOP_ON_FAIL=1 kernels/bench/topk_device_run.sh  (session 7: scoring cases, ncu,
#   the old tree's benchmark beside this one's)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
BK=${BK:-/tmp/bk_topk}
S="$OUT/summary.txt"
log() { echo "== $*" | tee -a "$S"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
t0=$(date +%s)
# OLD_TREE (a copy of another commit's kernels/ and tests/): its benchmark is built into BK_OLD beside
# this tree's build; variants labelled old* run it (the same call times both kernels)
if [ -n "${OLD_TREE:-}" ]; then
  BK_OLD=${BK_OLD:-${BK}_old}
  ( cmake -S "$OLD_TREE/kernels" -B ${BK_OLD} -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON \
      > /tmp/build_old.log 2>&1 && cmake --build ${BK_OLD} -j8 --target cisa_kernel_bench >> /tmp/build_old.log 2>&1 ) &
  old_pid=$!
fi
cmake -S kernels -B ${BK} -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
  > /tmp/build_topk.log 2>&1 && cmake --build ${BK} -j16 >> /tmp/build_topk.log 2>&1
rc=$?
if [ -n "${OLD_TREE:-}" ]; then wait $old_pid; log "old tree build rc=$? ($(( $(date +%s) - t0 )) s)"; fi
grep -A2 "topk_kernel" /tmp/build_topk.log | grep -E "registers|spill" | sort | uniq -c >> "$S"
log "build rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED|Error" /tmp/build_topk.log | head -60; tail -20 /tmp/build_topk.log; exit 1; }
${BK}/kernels_gpu_test > "$OUT/gpu_test.log" 2>&1
trc=$?
log "gpu_test rc=$trc $(tail -1 "$OUT/gpu_test.log") ($(( $(date +%s) - t0 )) s)"
[ $trc -ne 0 ] && [ -n "${STOP_ON_FAIL:-}" ] && { grep -E "FAIL|mismatches [1-9]" "$OUT/gpu_test.log" | head -20 >> "$S"; cat "$S"; exit 1; }
grep -E "^topk .*(mismatches [1-9]|rows of)|FAIL" "$OUT/gpu_test.log" | cut -c1-150 >> "$S"
for e in ${TEST_ENVS:-}; do
  env ${e//,/ } ${BK}/kernels_gpu_test > /tmp/gt_env.log 2>&1
  log "gpu_test ($e) rc=$? $(tail -1 /tmp/gt_env.log)"
  grep -E "^topk .*(mismatches [1-9]|rows of)|FAIL" /tmp/gt_env.log | cut -c1-150 >> "$S"
done
C=${BENCH_CASES:-topk_n65536_k4096_r64,topk_n65536_k4096_r256,topk_n65536_k4096_r64_key16,topk_n65536_k4096_r256_key16}
for v in ${TOPK_VARIANTS:-default:}; do
  label=${v%%:*}; envs=${v#*:}
  bin=${BK}/cisa_kernel_bench; [[ $label == old* ]] && bin=${BK_OLD}/cisa_kernel_bench
  env ${envs//,/ } $bin --csv "/tmp/ab_$label.csv" --cases "$C" > /tmp/ab.log 2>&1
  log "bench $label ($envs) rc=$? ($(( $(date +%s) - t0 )) s)"
  grep -E "^(topk|score)" /tmp/ab.log | sed -E 's/ +/ /g' | cut -c1-170 >> "$S"
  { echo "### $label ($envs)"; cat /tmp/ab.log; } >> "$OUT/bench_all.log"
  cat "/tmp/ab_$label.csv" >> "$OUT/bench_all.csv"
done
san() {  # tool, env list (comma-separated, may be empty)
  local tool=$1 envs=${2:-}
  env ${envs//,/ } timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --kernel-name kns=${SAN_KERNEL:-topk_kernel} --error-exitcode 9 \
    ${BK}/kernels_gpu_test 1 > /tmp/san_$tool.log 2>&1
  log "compute-sanitizer $tool (${SAN_KERNEL:-topk_kernel}; ${envs:-defaults}) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san_$tool.log | tr '\n' ' ') ($(( $(date +%s) - t0 )) s)"
  grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san_$tool.log >> "$OUT/sanitize_findings.txt"
}
for nc in ${NCU_CASES:-}; do  # one launch of the kernel under ncu: speed of light, memory, occupancy, warp states
  env ${NCU_ENV:-} timeout 120 ncu --clock-control none -k regex:${nc#*:} -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
    --metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_requests_srcunit_tex_op_write.sum \
    ${BK}/cisa_kernel_bench --csv /tmp/ncu.csv --cases ${nc%%:*} > "$OUT/ncu_${nc%%:*}.txt" 2>&1
  log "ncu ${nc} rc=$? ($(( $(date +%s) - t0 )) s)"
done
for tool in ${SAN:-}; do san $tool; done
for ts in ${SAN_ALT:-}; do san ${ts%%:*} ${ts#*:}; done
cat "$S"
