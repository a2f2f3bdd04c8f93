#!/usr/bin/env bash
# Runs on the GPU machine (device tool): builds the measuring binary with the project's CMake and
# runs `calibrate` (card bench + this project's kernel classes) into $OUT/h200_sxm.calibration.yaml.
# Pass CISA_GIT_HASH=<commit> so the file's provenance names the commit that ran.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/calibrate.log"
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS="" >>"$OUT/calibrate.log" 2>&1 || exit 1
target=cisa-sim
grep -q "Boost.Program_options not found" "$OUT/calibrate.log" && target=cisa-measure
cmake --build /tmp/b -j16 --target $target >>"$OUT/calibrate.log" 2>&1 || { grep -E "error" -A3 "$OUT/calibrate.log" | head -40; exit 1; }
if [ $target = cisa-sim ]; then
  timeout 300 /tmp/b/cisa-sim calibrate --out "$OUT/h200_sxm.calibration.yaml" 2>&1 | tee -a "$OUT/calibrate.log"
else
  timeout 300 /tmp/b/cisa-measure --calibrate "$OUT/h200_sxm.calibration.yaml" 2>&1 | tee -a "$OUT/calibrate.log"
fi
