#!/usr/bin/env bash
# (Run 1 of session 12: the CISA_GEMV bulk* modes it names existed only in that tree, kept as
# results/h200/session12_kern/variants/scoring_bulk_run1.patch; on the final tree they fall back to main's GEMV.)
# Session 12 (decode step helper): one device call from a folder holding new/kernels (this tree),
# old/kernels (main 37c4f7d) and eigen3/ (headers). Builds both; GPU tests on the new tree for every
# logical-order GEMV variant (CISA_GEMV); bench A/B (old and new, representatives in logical order
# unless the label says phys), alternating, two rounds; ncu of the logical GEMV (old cp.async, new
# bulk); compute-sanitizer memcheck / racecheck / synccheck on the GEMV and the attention kernels.
# Each step is skipped once the call's time budget (BUDGET s) is spent.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BUDGET=${BUDGET:-330}; HARD=${HARD:-360}  # no step starts after BUDGET s; none runs past HARD s
log() { echo "== [$SECONDS s] $*" | tee -a "$OUT/summary.txt"; }
left() { [ $SECONDS -lt $1 ]; }
log "$(date -u) $(nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)"
cfg="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON -DCISA_EIGEN_INCLUDE=$PWD/eigen3"
(cmake -S old/kernels -B /tmp/bo $cfg > /tmp/bo.log 2>&1 && cmake --build /tmp/bo -j6 --target cisa_kernel_bench >> /tmp/bo.log 2>&1; echo $? > /tmp/bo.rc) &
cmake -S new/kernels -B /tmp/bn $cfg > /tmp/bn.log 2>&1 && cmake --build /tmp/bn -j10 --target kernels_gpu_test cisa_kernel_bench >> /tmp/bn.log 2>&1
rc=$?; wait
log "build new rc=$rc old rc=$(cat /tmp/bo.rc)"
grep -A3 "score_gemv_kernel\|attn_kernelILi[12]ELi[24]ELi3ELb0ELb0ELi64ELb1" /tmp/bn.log | grep -E "Used|spill" > "$OUT/ptxas_new.txt"
[ $rc -ne 0 ] && { grep -B3 -A10 error /tmp/bn.log | head -40 | tee -a "$OUT/summary.txt"; exit 1; }
/tmp/bn/kernels_gpu_test 1212 > "$OUT/gpu_test.log" 2>&1; log "gpu_test (default) rc=$? $(tail -1 $OUT/gpu_test.log)"
grep -E "FAIL" "$OUT/gpu_test.log" | head -20 >> "$OUT/summary.txt"
grep -E "decode_(r4_ragged|long_r4) \(logical reps\): (scores|serial|early part taken, 7)" "$OUT/gpu_test.log" >> "$OUT/summary.txt"
C1=cisa_step_decode_inkling_b16,score_decode_inkling_b16
C2=cisa_step_decode_inkling_b16,score_decode_inkling_b16,score_prefill_inkling_b16_p512_g4
# a step's time limit: its own, cut to what is left before HARD
lim() { local r=$((HARD - SECONDS)); [ $r -lt $1 ] && echo $((r > 5 ? r : 5)) || echo $1; }
bench() { local label=$1 cases=$2; shift 2
  left $BUDGET || { log "skip bench $label"; return; }
  timeout $(lim 60) "$@" --csv /tmp/ab_$label.csv --cases $cases > /tmp/ab_$label.log 2>&1; log "bench $label rc=$?"
  grep -E "^(cisa|score)" /tmp/ab_$label.log | grep -v ":upload_once\|:stream\|:parts[234]" | cut -c1-118 | tee -a "$OUT/summary.txt"
  { echo "### $label"; cat /tmp/ab_$label.log; } >> "$OUT/ab_all.log"; sed "s/^/$label,/" /tmp/ab_$label.csv >> "$OUT/ab_all.csv"; }
san() { local tool=$1 filt=$2 t=$3
  left $BUDGET || { log "skip $tool $filt"; return; }
  timeout $(lim $t) compute-sanitizer --tool $tool $filt --error-exitcode 9 /tmp/bn/kernels_gpu_test 7 > /tmp/san.log 2>&1
  log "$tool ($filt) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks passed|Internal' /tmp/san.log | tr '\n' ' ')"
  grep -m2 -B2 -A14 "Invalid\|Race\|hazard\|Barrier" /tmp/san.log | head -40 >> "$OUT/summary.txt"; }
vtest() { local v=$1
  left $BUDGET || { log "skip gpu_test $v"; return; }
  CISA_GEMV=$v timeout $(lim 60) /tmp/bn/kernels_gpu_test 1313 > /tmp/t_$v.log 2>&1; log "gpu_test CISA_GEMV=$v rc=$? $(tail -1 /tmp/t_$v.log)"
  grep FAIL /tmp/t_$v.log | head -5 >> "$OUT/summary.txt"; }
L="env CISA_REP_LOGICAL=1"
NB=/tmp/bn/cisa_kernel_bench; OB=/tmp/bo/cisa_kernel_bench
bench r1_old $C1 $L $OB
bench r1_bulk43 $C1 $L $NB
bench r1_cp $C1 $L CISA_GEMV=cp $NB
# ncu: the logical GEMV, old (cp.async) and new (bulk 4x3)
for v in old bulk43; do
  left $BUDGET || { log "skip ncu $v"; continue; }
  b=$NB; [ $v = old ] && b=$OB
  timeout $(lim 60) env CISA_REP_LOGICAL=1 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section Occupancy \
    --metrics dram__bytes_read.sum,gpu__time_duration.sum \
    -k regex:score_gemv --launch-count 1 $b --cases score_decode_inkling_b16 > "$OUT/ncu_$v.txt" 2>&1
  log "ncu $v rc=$? $(grep -E ' Duration|DRAM Throughput|dram__bytes_read.sum ' $OUT/ncu_$v.txt | tr -s ' ' | tr '\n' ';')"
done
bench r2_bulk43 $C2 $L $NB
bench r2_old $C2 $L $OB
bench r2_cp $C1 $L CISA_GEMV=cp $NB
san memcheck "--kernel-name kns=score_gemv" 50
san synccheck "--kernel-name kns=score_gemv" 50
san racecheck "--kernel-name kns=score_gemv" 70
san memcheck "--kernel-name kns=attn_kernel" 70
san synccheck "--kernel-name kns=attn_kernel" 70
bench r2_bulk33 $C1 $L CISA_GEMV=bulk33 $NB
bench r2_bulk25 $C1 $L CISA_GEMV=bulk25 $NB
bench r2_bulk44 $C1 $L CISA_GEMV=bulk44 $NB
vtest cp; vtest bulk33; vtest bulk25; vtest bulk44
bench r2_oldphys $C2 $OB
bench r2_newphys $C1 $NB
san racecheck "" 120
log "done $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
