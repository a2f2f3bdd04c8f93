#!/usr/bin/env bash
# Runs on the GPU machine (device tool): builds the whole project with its CMake, runs the CPU tests,
# calibrates the card, measures scenarios with that calibration, profiles sampled points with Nsight
# Compute and times the cuDNN peer on the same card. Everything lands in $OUT (packed, since the
# device tool returns few files).
#   SCENARIOS="a b"      scenarios to measure (default: the three shipped 1M scenarios)
#   NCU="scenario:points ..."  Nsight Compute byte counts, e.g. "ultra_tp2_1m:0,8" (default none)
#   PEERS="a b"          result files (scenario names) that get the cuDNN peer (default none)
#   PEER_REPS=5          timed repetitions per peer form
#   GPU_TESTS=1          also run the kernels' GPU test
#   CALIBRATION=FILE     use this calibration instead of calibrating again (one calibration per sweep)
#   SANITIZE=1           run the measurement path on tests/gpu/measure_smoke.yaml and
#                        tests/gpu/measure_designs_smoke.yaml (issue 15's design paths) under compute-sanitizer
set -uo pipefail
# The copy on the GPU machine may carry stale git metadata: pass CISA_GIT_HASH=<commit> so the
# provenance of calibration and result files names the commit that ran.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT/run"
R="$OUT/run"
log() { echo "== $(date +%T) $*" | tee -a "$R/device.log"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$R/device.log"
log configure
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS="unit;cli;route;plan" >"$R/configure.log" 2>&1 \
  || { tail -40 "$R/configure.log"; exit 1; }
log build
cmake --build /tmp/b -j16 >"$R/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$R/build.log" | head -60; exit 1; }
BIN=/tmp/b/cisa-sim
[ -x "$BIN" ] || BIN=/tmp/b/cisa-measure
log "ctest (CPU tests)"
(cd /tmp/b && timeout 240 ctest -j8 -E "kernels_gpu_test" --output-on-failure >"$R/ctest.log" 2>&1); tail -3 "$R/ctest.log"
grep -E "Failed|\*\*\*" "$R/ctest.log" | head -20
if [ "${GPU_TESTS:-0}" = 1 ]; then
  log "kernels GPU test + compute-sanitizer"
  timeout 200 /tmp/b/kernels/kernels_gpu_test >"$R/gpu_test.log" 2>&1; echo "gpu test rc=$?"; tail -3 "$R/gpu_test.log"
fi
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    log "compute-sanitizer $tool on the measurement path"
    FLAG=""; [ "$BIN" = /tmp/b/cisa-sim ] && FLAG="--measure on"
    for smoke in measure_smoke measure_designs_smoke; do
      timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $BIN --scenario tests/gpu/$smoke.yaml $FLAG \
        --out "$R/${smoke}_$tool.h5" > "$R/sanitizer_${smoke}_$tool.log" 2>&1
      echo "$smoke $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error" "$R/sanitizer_${smoke}_$tool.log" | head -5
    done
  done
fi
log calibrate
if [ -n "${CALIBRATION:-}" ]; then
  cp "$CALIBRATION" "$R/h200_sxm.calibration.yaml"; echo "using $CALIBRATION"
elif [ "$BIN" = /tmp/b/cisa-sim ]; then
  timeout 180 $BIN calibrate --out "$R/h200_sxm.calibration.yaml"
else
  timeout 180 $BIN --calibrate "$R/h200_sxm.calibration.yaml"
fi
# The same GPU preset with this run's calibration.
sed "s#^calibration:#calibration: $R/h200_sxm.calibration.yaml\n_old_calibration:#" models/gpu/h200_sxm.yaml \
  | awk '/^_old_calibration:/{skip=1; next} skip && /^  /{next} {skip=0; print}' > "$R/h200_calibrated.yaml"
SET="--set hardware=$R/h200_calibrated.yaml"
MEAS=""
[ "$BIN" = /tmp/b/cisa-sim ] && MEAS="--measure on"
for s in ${SCENARIOS:-inkling_tp8_1m ultra_tp2_1m nano_tp1_1m}; do
  log "measure $s"
  timeout 400 $BIN --scenario scenarios/$s.yaml $SET $MEAS --out "$R/${s}_device_run.h5" >"$R/${s}_measure.log" 2>&1
  echo "rc=$?"; grep -v "points, .* s, ETA" "$R/${s}_measure.log" | tail -30
done
for spec in ${NCU:-}; do
  s=${spec%%:*}; pts=${spec#*:}
  log "ncu $s points $pts"
  timeout 400 python3 analysis/ncu_points.py "$R/${s}_device_run.h5" --binary $BIN --scenario scenarios/$s.yaml $SET \
    --points "$pts" --keep-raw "$R/ncu_raw_$s" 2>&1 | tail -30
done
for s in ${PEERS:-}; do
  log "peers $s"
  timeout 400 python3 analysis/measure_peers.py "$R/${s}_device_run.h5" --reps "${PEER_REPS:-5}" 2>"$R/${s}_peers.log" | tail -30
  tail -5 "$R/${s}_peers.log"
done
log done
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$R"
