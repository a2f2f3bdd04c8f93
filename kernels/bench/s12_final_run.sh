#!/usr/bin/env bash
# Session 12 (decode step helper), second call: the final tree (new/kernels: main's GEMV, the early
# attention kernel's list entries one tile ahead, the CISA_GEMV=ef diagnostic) against main 37c4f7d
# (old/kernels). GPU tests (default and CISA_GEMV=ef); bench A/B alternating, three rounds, logical
# and physical representatives; racecheck (unfiltered) on the two logical decode step cases; the
# filtered GEMV racecheck on main's kernel (tool check); memcheck of the ef GEMV.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-110}; HARD=${HARD:-120}
log() { echo "== [$SECONDS s] $*" | tee -a "$OUT/summary.txt"; }
left() { [ $SECONDS -lt $1 ]; }
lim() { local r=$((HARD - SECONDS)); [ $r -lt $1 ] && echo $((r > 5 ? r : 5)) || echo $1; }
log "$(date -u) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)"
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_EIGEN_INCLUDE=$PWD/eigen3"
(cmake -S old/kernels -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S new/kernels -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j10 --target kernels_gpu_test cisa_kernel_bench >> /tmp/bn.log 2>&1
rc=$?; wait
log "build new rc=$rc old rc=$(cat /tmp/bo.rc)"
[ $rc -ne 0 ] && { grep -B3 -A10 error /tmp/bn.log | head -40 | tee -a "$OUT/summary.txt"; exit 1; }
/tmp/bn/kernels_gpu_test 1414 > "$OUT/gpu_test.log" 2>&1; log "gpu_test (default) rc=$? $(tail -1 $OUT/gpu_test.log)"
grep -E "FAIL" "$OUT/gpu_test.log" | head -20 >> "$OUT/summary.txt"
CISA_GEMV=ef timeout $(lim 40) /tmp/bn/kernels_gpu_test 1515 > /tmp/t_ef.log 2>&1; log "gpu_test CISA_GEMV=ef rc=$? $(tail -1 /tmp/t_ef.log)"
grep FAIL /tmp/t_ef.log | head -5 >> "$OUT/summary.txt"
C1=cisa_step_decode_inkling_b16,score_decode_inkling_b16
bench() { local label=$1; shift
  left $BUDGET || { log "skip bench $label"; return; }
  timeout $(lim 30) "$@" --csv /tmp/ab_$label.csv --cases $C1 > /tmp/ab_$label.log 2>&1; local r=$?
  echo "$label rc=$r $(grep -E '^(cisa_step_decode_inkling_b16(:attention|:scoring|:topk)?|score_decode_inkling_b16) ' /tmp/ab_$label.log | awk '$3 ~ /^[0-9.]+$/ {print $1"="$3}' | sed 's/cisa_step_decode_inkling_b16/step/;s/score_decode_inkling_b16/gemv/' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  { echo "### $label"; cat /tmp/ab_$label.log; } >> "$OUT/ab_all.log"; sed "s/^/$label,/" /tmp/ab_$label.csv >> "$OUT/ab_all.csv"; }
NB=/tmp/bn/cisa_kernel_bench; OB=/tmp/bo/cisa_kernel_bench
for r in 1 2 3; do
  bench r${r}_old_log env CISA_REP_LOGICAL=1 $OB
  bench r${r}_new_log env CISA_REP_LOGICAL=1 $NB
  bench r${r}_new_ef env CISA_REP_LOGICAL=1 CISA_GEMV=ef $NB
  bench r${r}_new_phys $NB
  bench r${r}_old_phys $OB
done
san() { local tool=$1 t=$2; shift 2
  left $BUDGET || { log "skip $tool $*"; return; }
  timeout $(lim $t) env "$@" compute-sanitizer --tool $tool ${SANF:-} --error-exitcode 9 /tmp/bn/kernels_gpu_test 7 > /tmp/san.log 2>&1
  log "$tool ($* ${SANF:-}) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks passed|Internal' /tmp/san.log | tr '\n' ' ')"
  grep -m2 -B2 -A14 "Invalid\|Race\|hazard\|Barrier" /tmp/san.log | head -40 >> "$OUT/summary.txt"; }
san racecheck 60 CISA_TEST_CASES=decode_r4_ragged,decode_long_r4
SANF="--kernel-name kns=score_gemv" san racecheck 20 CISA_TEST_CASES=decode_r4_ragged
SANF="--kernel-name kns=score_gemv" san memcheck 20 CISA_GEMV=ef CISA_TEST_CASES=decode_r4_ragged,decode_long_r4
log "done $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
