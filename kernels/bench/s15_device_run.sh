#!/usr/bin/env bash
# Issue 14 session 15 (kernels helper), one device call. Run from a copy holding kernels/ and tests/.
# MODE=bench (call 1): kernels/bench/device_run.sh test bench (GPU tests, own bench, peers.py), then
#   compute-sanitizer memcheck / synccheck / racecheck on the whole GPU test while DEADLINE (s since start) allows.
# MODE=ab (call 2): build this tree and OLD_TREE's bench; GPU tests; A/B of AB_CASES (old / new, alternating,
#   ROUNDS rounds); compute-sanitizer memcheck / racecheck / synccheck on topk_kernel.
# Everything lands in $OUT/s15.tar.gz plus $OUT/summary.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/s15w; rm -rf $W; mkdir -p $W
S="$OUT/summary.txt"
log() { echo "== [$(el) s] $*" | tee -a "$S"; }
DEADLINE=${DEADLINE:-300}
san_run() {  # tool filter-kernel(or none) label
  local tool=$1 k=$2 left=$(( DEADLINE - $(el) - 5 ))
  [ $left -lt 25 ] && { log "compute-sanitizer $tool ($k): skipped, $left s left"; return; }
  local filt="--kernel-name kns=$k"; [ "$k" = none ] && filt=""
  timeout $left compute-sanitizer --tool $tool $filt --error-exitcode 9 $BK/kernels_gpu_test 1 > $W/san_${tool}_${k}.log 2>&1
  log "compute-sanitizer $tool ($k) rc=$? $(grep -E 'SUMMARY|checks passed' $W/san_${tool}_${k}.log | tr '\n' ' ')"
  { echo "### $tool $k"; grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" $W/san_${tool}_${k}.log; tail -3 $W/san_${tool}_${k}.log; } >> $W/sanitize.log
}
case ${MODE:-bench} in
  bench)
    BK=/tmp/bk15; export BK
    OUT=$W bash kernels/bench/device_run.sh test bench > $W/device_run.out 2>&1
    log "device_run test bench rc=$?"; cat $W/summary.txt >> "$S"
    grep -E "^(topk|score_prefill_inkling|cisa_step|dense_prefill|cisa_attn_prefill)" $W/bench.log | sed -E 's/ +/ /g' | cut -c1-150 >> "$S"
    for t in memcheck synccheck racecheck; do san_run $t none; done ;;
  ab)
    BK=/tmp/bk15n
    ( cmake -S "$OLD_TREE/kernels" -B ${BK}_old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON \
        > $W/build_old.log 2>&1 && cmake --build ${BK}_old -j8 --target cisa_kernel_bench >> $W/build_old.log 2>&1 ) &
    opid=$!
    cmake -S kernels -B $BK -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
      > $W/build.log 2>&1 && cmake --build $BK -j12 --target cisa_kernel_bench kernels_gpu_test >> $W/build.log 2>&1
    rc=$?; wait $opid; log "build rc=$rc, old build rc=$?; nonzero spill lines: $(grep -E '[1-9][0-9]* bytes spill' $W/build.log | wc -l)"
    grep -A2 "topk" $W/build.log | grep -E "registers|spill" | sort | uniq -c >> "$S"
    if [ $rc -ne 0 ]; then grep -B5 -A20 -E "error|FAILED" $W/build.log | head -60; tar czf "$OUT/s15.tar.gz" -C $W .; exit 1; fi
    $BK/kernels_gpu_test > $W/gpu_test.log 2>&1; log "gpu_test rc=$? $(tail -1 $W/gpu_test.log)"
    grep -E "FAIL|mismatches [1-9]" $W/gpu_test.log | head -20 >> "$S"
    for e in ${TEST_ENVS:-}; do
      env ${e//,/ } $BK/kernels_gpu_test 7 > $W/gt_env.log 2>&1; log "gpu_test ($e, seed 7) rc=$? $(tail -1 $W/gt_env.log)"
      grep -E "FAIL|mismatches [1-9]" $W/gt_env.log | head -20 >> "$S"
    done
    for r in $(seq 1 ${ROUNDS:-3}); do
      for v in ${AB_VARIANTS:-old: new:}; do
        label=${v%%:*}; envs=${v#*:}; bin=$BK/cisa_kernel_bench; [[ $label == old* ]] && bin=${BK}_old/cisa_kernel_bench
        env ${envs//,/ } timeout 60 $bin --csv $W/ab.csv --cases "$AB_CASES" > $W/ab1.log 2>&1
        log "ab r$r $label ($envs) rc=$?"
        grep -E "^topk" $W/ab1.log | sed -E 's/ +/ /g' | cut -c1-120 >> "$S"
        { echo "### r$r $label ($envs)"; cat $W/ab1.log; } >> $W/ab.log
      done
    done
    for t in memcheck racecheck synccheck; do san_run $t topk_kernel; done ;;
esac
cp $W/summary.txt $W/summary_device_run.txt 2>/dev/null
tar czf "$OUT/s15.tar.gz" -C $W . ; log "done"
