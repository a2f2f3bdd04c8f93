#!/usr/bin/env bash
# Issue 14 session 14 (kernels helper), one device call: build this tree (and OLD_TREE's bench beside
# it when given), GPU tests (default and each TEST_ENVS entry), the prefill-scoring KV-heads cases
# (A/B over KV_VARIANTS, alternating, two rounds), ncu of one scoring launch at kv 1 and 4 (each
# NCU_ENVS entry), compute-sanitizer on the top-k kernels (SAN_KERNEL), the quick bench (QUICK=1,
# all own cases) and the A/B cases (AB_CASES over AB_VARIANTS: label:ENV=1,... ; old* = OLD_TREE).
# (order: build, tests, AB, sanitizers, KV cases, ncu, quick bench; SAN_ALT kernel 'none' = no filter)
# Logs to $OUT (<= 8 files): summary.txt gpu_test.log kv_ab.log ncu_kv.txt bench_quick.log
# kernels_quick.csv sanitize.log ab.log
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
BK=${BK:-/tmp/bk14}
S="$OUT/summary.txt"
t0=$(date +%s)
log() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$S"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
if [ -n "${OLD_TREE:-}" ]; then
  ( cmake -S "$OLD_TREE/kernels" -B ${BK}_old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON \
      > /tmp/build_old.log 2>&1 && cmake --build ${BK}_old -j8 --target cisa_kernel_bench >> /tmp/build_old.log 2>&1 ) &
  old_pid=$!
fi
cmake -S kernels -B $BK -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
  > /tmp/build14.log 2>&1 && cmake --build $BK -j16 --target cisa_kernel_bench kernels_gpu_test >> /tmp/build14.log 2>&1
rc=$?
[ -n "${OLD_TREE:-}" ] && { wait $old_pid; log "old build rc=$?"; }
log "build rc=$rc; spills: $(grep -c 'bytes spill stores' /tmp/build14.log) lines, nonzero: $(grep -E '[1-9][0-9]* bytes spill' /tmp/build14.log | wc -l)"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED" /tmp/build14.log | head -60; exit 1; }
$BK/kernels_gpu_test > "$OUT/gpu_test.log" 2>&1
log "gpu_test (default) rc=$? $(tail -1 "$OUT/gpu_test.log")"
grep -E "FAIL|mismatches [1-9]" "$OUT/gpu_test.log" | head -20 >> "$S"
for e in ${TEST_ENVS:-}; do
  env ${e//,/ } $BK/kernels_gpu_test 7 > /tmp/gt.log 2>&1
  log "gpu_test ($e, seed 7) rc=$? $(tail -1 /tmp/gt.log)"
  grep -E "FAIL|mismatches [1-9]" /tmp/gt.log | head -20 >> "$S"
  { echo "### $e"; grep -E "FAIL|mismatches [1-9]|checks passed" /tmp/gt.log; } >> "$OUT/gpu_test.log"
done
for round in 1 2; do
  for v in ${AB_VARIANTS:-}; do
    label=${v%%:*}; envs=${v#*:}
    bin=$BK/cisa_kernel_bench; [[ $label == old* ]] && bin=${BK}_old/cisa_kernel_bench
    env ${envs//,/ } timeout 90 $bin --csv /tmp/ab.csv --cases "$AB_CASES" > /tmp/ab.log 2>&1
    log "ab r$round $label ($envs) rc=$?"
    grep -E "^(score|topk|cisa)" /tmp/ab.log | grep -vE ":(reserve|parts|stream|upload)" | sed -E 's/ +/ /g' | cut -c1-120 >> "$S"
    { echo "### r$round $label ($envs)"; cat /tmp/ab.log; } >> "$OUT/ab.log"
  done
done
san() {  # tool [env]
  local tool=$1 envs=${2:-}
  local filt="--kernel-name kns=${SAN_KERNEL:-topk_kernel}"; [ "${SAN_KERNEL:-}" = none ] && filt=""
  env $envs timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool $filt \
    --error-exitcode 9 $BK/kernels_gpu_test 1 > /tmp/san.log 2>&1
  log "compute-sanitizer $tool (${SAN_KERNEL:-topk_kernel}; ${envs:-defaults}) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san.log | tr '\n' ' ')"
  { echo "### $tool ${SAN_KERNEL:-topk_kernel} $envs"; grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san.log; tail -3 /tmp/san.log; } >> "$OUT/sanitize.log"
}
for tool in ${SAN:-}; do san $tool; done
for ts in ${SAN_ALT:-}; do  # kernel@tool@ENV=1+ENV2=2
  IFS=@ read -r sk st se <<< "$ts"; SAN_KERNEL=$sk san $st "${se//+/ }"
done
for round in 1 2; do
  for v in ${KV_VARIANTS:-default:}; do
    label=${v%%:*}; envs=${v#*:}
    env ${envs//,/ } timeout 60 $BK/cisa_kernel_bench --csv /tmp/kv.csv --cases score_prefill_kv > /tmp/kv.log 2>&1
    log "kv r$round $label ($envs) rc=$?"
    grep -E "^score_prefill_kv" /tmp/kv.log | sed -E 's/ +/ /g' | cut -c1-200 >> "$S"
    { echo "### r$round $label ($envs)"; cat /tmp/kv.log; } >> "$OUT/kv_ab.log"
  done
done
for e in ${NCU_ENVS:-default}; do
  [ "$e" = default ] && e=""
  env ${e//@/ } timeout 90 ncu --clock-control none -k 'regex:score_kernel|sum_iq' -c 4 --metrics \
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,\
sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size \
    $BK/cisa_kernel_bench --score-kv-once > /tmp/ncu.log 2>&1
  log "ncu (${e:-default}) rc=$?"
  { echo "### ncu ${e:-default}"; cat /tmp/ncu.log; } >> "$OUT/ncu_kv.txt"
done
if [ -n "${QUICK:-}" ]; then
  timeout ${QUICK_TIMEOUT:-150} $BK/cisa_kernel_bench --csv "$OUT/kernels_quick.csv" --cases all > "$OUT/bench_quick.log" 2>&1
  log "quick bench rc=$?"
  grep -E "^(card|gather|dense|cisa|score|topk)" "$OUT/bench_quick.log" | grep -vE ":(reserve|parts|stream|upload)" | sed -E 's/ +/ /g' | cut -c1-120 >> "$S"
fi
log "done"
