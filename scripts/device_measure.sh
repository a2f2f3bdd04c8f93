#!/usr/bin/env bash
# Runs on the GPU machine (device tool): builds the whole project with its CMake, runs the tests,
# calibrates the card and measures the shipped scenarios. Logs and HDF5 files go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/device.log"; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/device.log"
log configure
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS="unit;cli;route;plan" >"$OUT/configure.log" 2>&1 \
  || { tail -40 "$OUT/configure.log"; exit 1; }
grep -E "Boost|Catch2|HDF5|yaml" "$OUT/configure.log" | head
log build
cmake --build /tmp/b -j16 >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$OUT/build.log" | head -60; exit 1; }
BIN=/tmp/b/cisa-sim
[ -x "$BIN" ] || BIN=""
log "ctest (CPU tests; the kernels' GPU test ran in issue 3's runs)"
(cd /tmp/b && timeout 240 ctest -j8 -E "kernels_gpu_test" --output-on-failure >"$OUT/ctest.log" 2>&1); tail -5 "$OUT/ctest.log"
grep -E "Failed|\*\*\*" "$OUT/ctest.log" | head -20
log calibrate
if [ -n "$BIN" ]; then
  timeout 120 $BIN calibrate --out "$OUT/h200_sxm.calibration.yaml"
else
  timeout 120 /tmp/b/cisa-measure --calibrate "$OUT/h200_sxm.calibration.yaml"
fi
# The same GPU preset with this run's calibration (kernel-class rates measured on our kernels).
sed "s#^calibration:#calibration: $OUT/h200_sxm.calibration.yaml\n_old_calibration:#" models/gpu/h200_sxm.yaml \
  | awk '/^_old_calibration:/{skip=1; next} skip && /^  /{next} {skip=0; print}' > "$OUT/h200_calibrated.yaml"
SET="--set hardware=$OUT/h200_calibrated.yaml"
for s in ${SCENARIOS:-inkling_tp8_1m ultra_tp2_1m nano_tp1_1m}; do
  log "measure $s"
  if [ -n "$BIN" ]; then
    timeout 300 $BIN --scenario scenarios/$s.yaml $SET --measure on --out "$OUT/${s}_measured.h5" --format none 2>&1 | tail -40
  else
    timeout 300 /tmp/b/cisa-measure --scenario scenarios/$s.yaml $SET --out "$OUT/${s}_measured.h5" 2>&1 | tail -40
  fi
done
log done
