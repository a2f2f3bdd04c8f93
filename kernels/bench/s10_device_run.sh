#!/usr/bin/env bash
# Session 10 (decode step helper): one device call. Run from the root of a copy holding kernels/ and
# tests/ of the new tree; OLD_TREE = a copy of main's kernels/ and tests/ (the A/B base). Builds both
# (old: the benchmark only), runs the new GPU tests (two seeds), times the decode step old vs new in
# alternating rounds (round 1 also the standalone decode attention, dense decode and the g4 / g16
# prefill attention), then compute-sanitizer on the attention and top-k kernels of the new GPU
# tests. At most 6 files under $OUT: summary.txt, gpu_test.log, ab_all.log, ab_all.csv,
# sanitize.txt, build.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
OLD_TREE=${OLD_TREE:?}
ROUNDS=${ROUNDS:-3}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
t0=$(date +%s)
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON"
(cmake -S "$OLD_TREE/kernels" -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S kernels -B /tmp/bn $cfg -DCISA_PTXAS_VERBOSE=ON > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j10 >> /tmp/bn.log 2>&1
rc=$?
wait
log "build new rc=$rc old rc=$(cat /tmp/bo.rc) in $(( $(date +%s) - t0 )) s"
grep -B1 -A3 -E "Compiling entry function.*(attn_kernel|topk_kernel)" /tmp/bn.log | grep -E "Compiling|registers|spill" > "$OUT/build.txt"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED" /tmp/bn.log | head -60; cat "$OUT/summary.txt"; exit 1; }
# SASS of the 16-row kernel (the decode attention): where the grid-dependency wait sits among the
# loads, old and new
for t in bo bn; do
  echo "### SASS $t attn_kernel<1,4,3> (wait / loads)" >> "$OUT/build.txt"
  cuobjdump -sass /tmp/$t/libcisa_kernels.a 2>/dev/null | awk '/Function : /{f = /attn_kernelILi1ELi4E/} f' \
    | grep -nE "ACQBULK|PREEXIT|LDG|LDGSTS|CCTL|DEPBAR|griddep" | head -50 >> "$OUT/build.txt"
done
for seed in 1010 2020; do
  t0=$(date +%s)
  /tmp/bn/kernels_gpu_test $seed >> "$OUT/gpu_test.log" 2>&1; log "gpu_test seed $seed rc=$? $(tail -1 $OUT/gpu_test.log) in $(( $(date +%s) - t0 )) s"
done
grep -E "FAIL" "$OUT/gpu_test.log" | head -30 >> "$OUT/summary.txt"
C1=cisa_step_decode_inkling_b16,cisa_attn_decode_inkling_b16,dense_decode_inkling_b16,cisa_attn_prefill_inkling_b16_p512_g4,cisa_attn_prefill_inkling_b16_p512_g16
C2=cisa_step_decode_inkling_b16
bench() {  # label, binary, cases
  local label=$1 bin=$2 cases=$3
  t0=$(date +%s)
  $bin --csv /tmp/ab_$label.csv --cases $cases > /tmp/ab_$label.log 2>&1
  log "bench $label rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "^(cisa|dense)|top-k in the graph" /tmp/ab_$label.log | grep -v ":parts\|upload_once" | cut -c1-170 | tee -a "$OUT/summary.txt"
  { echo "### $label"; cat /tmp/ab_$label.log; } >> "$OUT/ab_all.log"
  sed "s/^/$label,/" /tmp/ab_$label.csv >> "$OUT/ab_all.csv"
}
bench r1_old /tmp/bo/cisa_kernel_bench $C1
bench r1_new /tmp/bn/cisa_kernel_bench $C1
for r in $(seq 2 $ROUNDS); do
  if [ $((r % 2)) -eq 0 ]; then bench r${r}_new /tmp/bn/cisa_kernel_bench $C2; bench r${r}_old /tmp/bo/cisa_kernel_bench $C2
  else bench r${r}_old /tmp/bo/cisa_kernel_bench $C2; bench r${r}_new /tmp/bn/cisa_kernel_bench $C2; fi
done
for k in attn topk; do
  for tool in memcheck racecheck synccheck; do
    [ $k = topk ] && [ $tool = racecheck ] && continue
    t0=$(date +%s)
    timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool --kernel-name kns=$k --error-exitcode 9 /tmp/bn/kernels_gpu_test 7 > /tmp/san.log 2>&1
    log "compute-sanitizer $tool ($k kernels) rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'SUMMARY|checks passed' /tmp/san.log | tr '\n' ' ')"
    { echo "### $tool $k"; grep -v "^seed\|rel err\|mismatches\|planted" /tmp/san.log | head -80; } >> "$OUT/sanitize.txt"
  done
done
cat "$OUT/summary.txt"
