#!/usr/bin/env bash
# Session 11 (decode step helper): one device call from a folder holding new/kernels (this tree) and
# old/kernels (main). Builds both, runs the new GPU tests, times old / new (physical reps) / new with
# CISA_REP_LOGICAL=1 (representatives in logical order) in the same call, then memcheck on scoring
# and representatives kernels.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader)"
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON"
(cmake -S old/kernels -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S new/kernels -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j10 --target kernels_gpu_test cisa_kernel_bench >> /tmp/bn.log 2>&1
rc=$?; wait
log "build new rc=$rc old rc=$(cat /tmp/bo.rc)"
[ $rc -ne 0 ] && { grep -B3 -A10 error /tmp/bn.log | head -40; exit 1; }
/tmp/bn/kernels_gpu_test 1111 > "$OUT/gpu_test.log" 2>&1; log "gpu_test rc=$? $(tail -1 $OUT/gpu_test.log)"
grep -E "FAIL|logical" "$OUT/gpu_test.log" | head -40 >> "$OUT/summary.txt"
C1=cisa_step_decode_inkling_b16,score_decode_inkling_b16,score_prefill_inkling_b16_p512_g4,cisa_step_prefill_inkling_b16_p512_g32
C2=cisa_step_decode_inkling_b16,score_prefill_inkling_b16_p512_g4
bench() { local label=$1 cases=$2; shift 2
  "$@" --csv /tmp/ab_$label.csv --cases $cases > /tmp/ab_$label.log 2>&1; log "bench $label rc=$?"
  grep -E "^(cisa|score)" /tmp/ab_$label.log | grep -v ":parts\|upload_once" | cut -c1-150 | tee -a "$OUT/summary.txt"
  { echo "### $label"; cat /tmp/ab_$label.log; } >> "$OUT/ab_all.log"; sed "s/^/$label,/" /tmp/ab_$label.csv >> "$OUT/ab_all.csv"; }
bench r1_old $C1 /tmp/bo/cisa_kernel_bench
bench r1_log $C1 env CISA_REP_LOGICAL=1 /tmp/bn/cisa_kernel_bench
bench r1_phys $C2 /tmp/bn/cisa_kernel_bench
bench r2_log $C2 env CISA_REP_LOGICAL=1 /tmp/bn/cisa_kernel_bench
bench r2_old $C2 /tmp/bo/cisa_kernel_bench
for k in score reps; do
  timeout 90 compute-sanitizer --tool memcheck --kernel-name kns=$k --error-exitcode 9 /tmp/bn/kernels_gpu_test 7 > /tmp/san.log 2>&1
  log "memcheck ($k kernels) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/san.log | tr '\n' ' ')"
  grep -m3 -A12 "Invalid" /tmp/san.log >> "$OUT/summary.txt"
done
cat "$OUT/summary.txt"
