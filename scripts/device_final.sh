#!/usr/bin/env bash
# One device call after a kernel change (sessions 6+): the merged kernels' GPU tests, the kernel
# benchmark with its peers, the calibration, a held-out set measured with cuDNN / FA2, the CLI
# benchmark on the device host's CPUs, and compute-sanitizer memcheck; the project builds in the
# background (nice) while the GPU tests run. Everything lands in $OUT/final.tar.gz, re-packed after
# each step, so a call cut short still returns what it finished.
#   CISA_GIT_HASH=...  the commit (provenance)   HELDOUT="heldout4_r3_kv2 ..."   DEADLINE=570 (s)
#   STEPS="test bench sanitize calibrate heldout cli memcheck remeasure" (default: test bench calibrate
#   heldout cli memcheck; sanitize = memcheck, racecheck and synccheck through device_run.sh)
#   IMPL_EXTRA="fit flex impls_flex"  more device_impls.sh steps beside calibrate / heldout
#   PRESET=NAME  the card's GPU preset (device_impls.sh: from nvidia-smi by default)
#   STEPS ncu with NCU="scenario:p,q ..." (NCU_H100=... instead on an H100): Nsight Compute DRAM/L2
#   bytes of those points (analysis/ncu_points.py), each priced for the card, in $OUT/final.tar.gz
#   STEPS ctatimes with CTAT="scenario:p,q ...": those points measured once more with
#   CISA_MEASURE_CTA_TIMES (the CISA attention CTAs' progress: ctas/<scenario>/point_<i>_attn_ctas.csv)
# The GPU image lacks the compiled Boost.Program_options, so only cisa-measure builds there: the CLI
# benchmark step runs only where cisa-sim built. PREBUILT=DIR: a cisa-sim built on the CPU machine at
# this commit, with its shared libraries in DIR/lib (carried in; scripts/bundle_prebuilt.sh packs them), measures and calibrates instead,
# and no project build runs here.
set -uo pipefail
START=$(date +%s)
OUT=${OUT:-/tmp/out}
DEADLINE=${DEADLINE:-570}
STEPS=${STEPS:-"test bench calibrate heldout cli memcheck"}
HELDOUT=${HELDOUT:-"heldout4_r3_kv2 heldout4_r7_kv1 heldout4_r16_kv2"}
W=/tmp/final
mkdir -p "$W" "$OUT"
want() { [[ " $STEPS " == *" $1 "* ]]; }
left() { echo $((DEADLINE - ($(date +%s) - START))); }
log() { echo "== $(date -u +%T) +$(($(date +%s) - START))s $*" | tee -a "$W/final.log"; }
pack() { tar -C /tmp -czf "$OUT/final.tar.gz.part" final && mv "$OUT/final.tar.gz.part" "$OUT/final.tar.gz"; }
log "commit ${CISA_GIT_HASH:-unknown}, steps: $STEPS"
# The project (cisa-measure for the GPU runs, cisa-sim for the CLI benchmark), in the background.
PREBUILT=${PREBUILT:+$(readlink -f "$PREBUILT")}
BUILD=""
if [ -n "$PREBUILT" ]; then
  export LD_LIBRARY_PATH="$PREBUILT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log "prebuilt: $("$PREBUILT/cisa-sim" --version 2>&1 | head -1)"
  BIN="$PREBUILT/cisa-sim" CLI="$PREBUILT/cisa-sim"
else
( nice -n 19 cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS=unit >"$W/configure.log" 2>&1 &&
  nice -n 19 cmake --build /tmp/b -j12 --target cisa-measure >"$W/build.log" 2>&1; echo "project build rc=$?" >>"$W/final.log"
  nice -n 19 cmake --build /tmp/b -j12 --target cisa-sim >>"$W/build.log" 2>&1 ) &
  BUILD=$! BIN=/tmp/b/cisa-measure CLI=/tmp/b/cisa-sim
fi
# Kernels standalone: GPU tests, then the benchmark and its torch peers (device_run.sh). A prebuilt
# bundle with kernels_gpu_test runs that binary for `test` (no kernel build here).
GPU_TEST=/tmp/bk/kernels_gpu_test
if [ -n "$PREBUILT" ] && [ -x "$PREBUILT/kernels_gpu_test" ] && want test && ! want bench && ! want sanitize; then
  GPU_TEST="$PREBUILT/kernels_gpu_test"
  mkdir -p "$W/kernels"
  timeout $(( $(left) - 240 )) "$GPU_TEST" >"$W/kernels/gpu_test.log" 2>&1
  log "prebuilt gpu tests rc=$? $(tail -2 "$W/kernels/gpu_test.log" | tr '\n' ' ')"
  pack
elif want test || want bench || want sanitize; then
  ks=""; want test && ks="test"; want bench && ks="$ks bench"; want sanitize && ks="$ks sanitize"
  OUT="$W/kernels" BK=/tmp/bk STOP_ON_FAIL=1 timeout $(( $(left) - 240 )) bash kernels/bench/device_run.sh $ks >"$W/kernels.log" 2>&1
  log "kernels ($ks) rc=$? $(grep -E 'gpu_test rc|bench rc|peers rc|sanitizer' "$W/kernels/summary.txt" | tr '\n' ' ')"
  pack
fi
if [ -n "$BUILD" ]; then wait "$BUILD"; log "$(tail -1 "$W/final.log")"; fi
if want calibrate || want heldout; then
  st=""; want calibrate && st="calibrate_first"; want heldout && st="$st heldout impls_heldout"
  st="$st ${IMPL_EXTRA:-}"
  OUT="$W/impls" BIN=$BIN STEPS="$st" HELDOUT="$HELDOUT" DEADLINE=$(( $(left) - 60 )) \
    bash scripts/device_impls.sh >"$W/impls.log" 2>&1
  log "impls ($st) rc=$?"; tail -5 "$W/impls.log" >>"$W/final.log"
  pack
fi
if want cli && [ -x "$CLI" ] && [ "$(left)" -gt 60 ]; then
  timeout $(( $(left) - 30 )) bash scripts/bench_cli.sh --sizes "100k 1m" --dir /tmp/clib "$CLI" >"$W/cli_bench.txt" 2>&1
  log "cli bench rc=$? ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"; rm -rf /tmp/clib
  pack
fi
if want memcheck && [ -x "$GPU_TEST" ] && [ "$(left)" -gt 40 ]; then
  timeout $(( $(left) - 15 )) compute-sanitizer --tool memcheck --error-exitcode 9 "$GPU_TEST" 1 >"$W/memcheck.log" 2>&1
  log "memcheck rc=$? $(grep -E 'SUMMARY' "$W/memcheck.log")"
  pack
fi
card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
preset=${PRESET:-$("$CLI" presets --for-device "$card" 2>/dev/null || echo h200_sxm)}
if want ncu && [ -x "$CLI" ] && [ "$(left)" -gt 60 ]; then
  specs=${NCU:-}; [[ $preset == h100* ]] && specs=${NCU_H100:-$specs}
  mkdir -p "$W/ncu"
  for spec in $specs; do
    s=${spec%%:*} pts=${spec#*:}
    [ "$(left)" -gt 40 ] || { log "ncu $s skipped (deadline)"; continue; }
    "$CLI" --scenario "scenarios/$s.yaml" --set hardware="$preset" --out "$W/ncu/$s.h5" >"$W/ncu/$s.log" 2>&1
    timeout $(( $(left) - 20 )) python3 analysis/ncu_points.py "$W/ncu/$s.h5" --binary "$CLI" \
      --scenario "scenarios/$s.yaml" --set hardware="$preset" --points "$pts" --keep-raw "$W/ncu/raw_$s" \
      --timeout 120 >>"$W/ncu/$s.log" 2>&1
    log "ncu $s ($preset) points $pts rc=$?"; pack
  done
fi
if want ctatimes && [ -x "$CLI" ]; then
  for spec in ${CTAT:-}; do
    s=${spec%%:*} pts=${spec#*:}
    [ "$(left)" -gt 30 ] || { log "ctatimes $s skipped (deadline)"; continue; }
    mkdir -p "$W/ctas/$s"
    CISA_MEASURE_ONLY=$pts CISA_MEASURE_CTA_TIMES="$W/ctas/$s" timeout $(( $(left) - 15 )) "$CLI" \
      --scenario "scenarios/$s.yaml" --set hardware="$preset" --measure on --out "$W/ctas/$s.h5" \
      >"$W/ctas/$s.log" 2>&1
    log "ctatimes $s ($preset) points $pts rc=$? ($(ls "$W/ctas/$s" | wc -l) files)"; pack
  done
fi
if want remeasure; then
  OUT="$W/remeasure" BIN=$BIN STEPS="remeasure" DEADLINE=$(( $(left) - 20 )) bash scripts/device_impls.sh >"$W/remeasure.log" 2>&1
  log "remeasure rc=$?"; pack
fi
log done
pack
