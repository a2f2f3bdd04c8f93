#!/usr/bin/env bash
# Session 10 (decode step helper): one device call. Run from the root of a copy holding kernels/ and
# tests/ of the new tree; OLD_TREE = a copy of main's kernels/ and tests/ (the A/B base). Builds both
# (old: the benchmark only), runs the new GPU tests, times the decode step (and the standalone decode
# attention / dense decode) old vs new in alternating rounds, then compute-sanitizer on the attention
# kernels of the new GPU tests. Everything under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
OLD_TREE=${OLD_TREE:?}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
t0=$(date +%s)
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON"
(cmake -S "$OLD_TREE/kernels" -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S kernels -B /tmp/bn $cfg -DCISA_PTXAS_VERBOSE=ON > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j10 >> /tmp/bn.log 2>&1
rc=$?
wait
log "build new rc=$rc old rc=$(cat /tmp/bo.rc) in $(( $(date +%s) - t0 )) s"
grep -B1 -A3 "Compiling entry function.*attn_kernel" /tmp/bn.log | grep -E "registers|spill" >> "$OUT/summary.txt"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED" /tmp/bn.log | head -60; cat "$OUT/summary.txt"; exit 1; }
t0=$(date +%s)
/tmp/bn/kernels_gpu_test 1010 > "$OUT/gpu_test.log" 2>&1; log "gpu_test rc=$? $(tail -1 $OUT/gpu_test.log) in $(( $(date +%s) - t0 )) s"
grep -E "FAIL|early part" "$OUT/gpu_test.log" | head -30 >> "$OUT/summary.txt"
C1=cisa_step_decode_inkling_b16,cisa_attn_decode_inkling_b16,dense_decode_inkling_b16
C2=cisa_step_decode_inkling_b16
bench() {  # label, binary, cases, env...
  local label=$1 bin=$2 cases=$3; shift 3
  t0=$(date +%s)
  env "$@" $bin --csv "$OUT/ab_$label.csv" --cases $cases > /tmp/ab_$label.log 2>&1
  log "bench $label rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "^(cisa|dense)|top-k in the graph" /tmp/ab_$label.log | cut -c1-170 | tee -a "$OUT/summary.txt"
  cat /tmp/ab_$label.log >> "$OUT/ab_all.log"
}
bench r1_old /tmp/bo/cisa_kernel_bench $C1 X=1
bench r1_new /tmp/bn/cisa_kernel_bench $C1 X=1
bench r1_noearly /tmp/bn/cisa_kernel_bench $C2 CISA_S10_NOEARLY=1
bench r2_new /tmp/bn/cisa_kernel_bench $C2 X=1
bench r2_old /tmp/bo/cisa_kernel_bench $C2 X=1
for tool in memcheck racecheck synccheck; do
  t0=$(date +%s)
  timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool --kernel-name kns=attn --error-exitcode 9 /tmp/bn/kernels_gpu_test 7 > /tmp/san_$tool.log 2>&1
  log "compute-sanitizer $tool (attn kernels) rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'SUMMARY|checks passed' /tmp/san_$tool.log | tr '\n' ' ')"
  grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/san_$tool.log >> "$OUT/sanitize_findings.txt"
done
cat "$OUT/summary.txt"
