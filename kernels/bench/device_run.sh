#!/usr/bin/env bash
# One device call: build the kernels standalone, run the GPU tests, compute-sanitizer, the benchmark
# and the peers, the ncu byte cross-check. Usage: kernels/bench/device_run.sh [test] [sanitize] [quick] [bench] [ncu]
# (STOP_ON_FAIL=1: skip the later steps when the GPU tests fail; BENCH_CASES: comma-separated case names)
# Logs and CSVs go to $OUT (at most 8 files come back).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
steps="${*:-test}"
BK=${BK:-/tmp/bk}  # build folder (another user's /tmp/bk on a shared warm machine may hold another tree)
ALT_ENV=${ALT_ENV:-}  # an alternative attention path (env assignment) for test0 / ab / sanitize
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader)"
t0=$(date +%s)
cmake -S kernels -B $BK -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_BUILD_TESTS=ON -DCISA_PTXAS_VERBOSE=ON \
  > /tmp/build.log 2>&1 && cmake --build $BK -j16 >> /tmp/build.log 2>&1
rc=$?
log "build rc=$rc in $(( $(date +%s) - t0 )) s"
log "HGMMA in SASS: $(cuobjdump --dump-sass $BK/libcisa_kernels.a 2>/dev/null | grep -c HGMMA)"
grep -A3 "attn_kernel" /tmp/build.log | grep -E "registers|spill" >> "$OUT/summary.txt"
[ $rc -ne 0 ] && { grep -B5 -A20 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
for s in $steps; do
  case $s in
    test)
      $BK/kernels_gpu_test 2>&1 | tee /tmp/gpu_test.log | tail -40; trc=${PIPESTATUS[0]}; cp /tmp/gpu_test.log "$OUT/"
      log "gpu_test rc=$trc"
      [ "$trc" -ne 0 ] && [ -n "${STOP_ON_FAIL:-}" ] && { log "tests failed: stopping"; break; } ;;
    quick)  # own bench only, no peers (BENCH_CASES)
      $BK/cisa_kernel_bench --csv "$OUT/kernels_quick.csv" --cases "${BENCH_CASES:-all}" 2>&1 | tee "$OUT/bench_quick.log" | grep -vE "^(read|BF16|world)" | cut -c1-150
      log "quick bench rc=${PIPESTATUS[0]}" ;;
    test0)
      for v in CISA_ATTN_MMA=sync $ALT_ENV; do
        env $v timeout 120 $BK/kernels_gpu_test > /tmp/gpu_test0.log 2>&1
        log "gpu_test ($v) rc=$? $(tail -1 /tmp/gpu_test0.log)"
      done ;;
    ab)
      ab_cases=${AB_CASES:-dense_prefill_inkling_b16_p512,dense_prefill_ultra_b16_p512,cisa_attn_prefill_inkling_b16_p512_g16,cisa_attn_prefill_inkling_b16_p512_g32,cisa_attn_prefill_ultra_b16_p512_g4}
      ab_run() {  # label, then the command prefix (env ...); extra bench args from AB_ARGS
        local label=$1; shift
        "$@" $BK/cisa_kernel_bench --csv /tmp/ab.csv --cases $ab_cases ${AB_ARGS:-} > /tmp/ab.log 2>&1
        log "A/B $label:"; grep -E "^(dense|cisa)" /tmp/ab.log | cut -c1-140 >> "$OUT/summary.txt"
      }
      ab_run "default" env; cp /tmp/ab.log /tmp/ab_default.log
      [ -n "${AB_ONLY_DEFAULT:-}" ] && continue
      if [ -n "$ALT_ENV" ] && grep -q "gpu_test ($ALT_ENV) rc=0" "$OUT/summary.txt"; then
        ab_run "alternative ($ALT_ENV)" env $ALT_ENV; cp /tmp/ab.log /tmp/ab_ws.log
        a=$(grep "^dense_prefill_inkling" /tmp/ab_default.log | awk '{print $3}')
        b=$(grep "^dense_prefill_inkling" /tmp/ab_ws.log | awk '{print $3}')
        if python3 -c "import sys; sys.exit(0 if float('$b') < float('$a') else 1)"; then
          export $ALT_ENV; log "bench uses $ALT_ENV ($b ms < $a ms)"
        fi
      fi ;;
    prof)
      ncu --clock-control none -k regex:topk_kernel -c 1 --section SpeedOfLight --section WarpStateStats \
        --section SchedulerStats --section LaunchStats --section Occupancy \
        $BK/cisa_kernel_bench --csv /tmp/p.csv --cases topk_n65536_k4096_r64 > "$OUT/prof_topk.txt" 2>&1
      log "prof rc=$?"; grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Achieved Occ" "$OUT/prof_topk.txt" | head -40 ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 9 $BK/kernels_gpu_test 1 > /tmp/sanitize_$tool.log 2>&1
        log "compute-sanitizer $tool rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/sanitize_$tool.log | tr '\n' ' ')"
        grep -m5 -B2 -A12 -E "^========= (Invalid|Race|Barrier|Error)|Hazard" /tmp/sanitize_$tool.log >> "$OUT/sanitize_findings.txt"
      done
      if [ -n "$ALT_ENV" ] && grep -q "gpu_test ($ALT_ENV) rc=0" "$OUT/summary.txt"; then
        for tool in memcheck racecheck synccheck; do
          env $ALT_ENV timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 9 $BK/kernels_gpu_test 1 > /tmp/sanitize_ws.log 2>&1
          log "compute-sanitizer $tool ($ALT_ENV) rc=$? $(grep -E 'SUMMARY|checks passed' /tmp/sanitize_ws.log | tr '\n' ' ')"
        done
      fi ;;
    bench)
      log "bench: ${ALT_ENV:-default attention paths}"
      $BK/cisa_kernel_bench --csv "$OUT/kernels_own.csv" --cases "${BENCH_CASES:-all}" 2>&1 | tee "$OUT/bench.log" | tail -40
      log "bench rc=${PIPESTATUS[0]}"
      PYTHONUNBUFFERED=1 timeout 400 python3 kernels/bench/peers.py --own "$OUT/kernels_own.csv" --out "$OUT/kernel_bench.csv" \
        --md "$OUT/kernel_bench.md" 2>&1 | tee "$OUT/peers.log" | tail -40
      log "peers rc=${PIPESTATUS[0]}"
      mv "$OUT/kernels_own.csv" /tmp/ ;;
    ncu)
      bash kernels/bench/ncu_check.sh $BK/cisa_kernel_bench "$OUT" 2>&1 | tee -a "$OUT/summary.txt" | tail -30; rm -f "$OUT/ncu_expected.txt" "$OUT/ncu_stderr.log"
      log "ncu rc=$?" ;;
  esac
done
cat "$OUT/summary.txt"
