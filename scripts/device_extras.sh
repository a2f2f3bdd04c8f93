#!/usr/bin/env bash
# GPU machine: Nsight Compute bytes and the cuDNN peer for committed measured runs, without
# measuring again (the times in results/h200/measured/*_device_run.h5 stay those of the run).
#   NCU="scenario:points ..."   PEERS="scenario ..."   PEER_REPS=3
set -uo pipefail
# The copy on the GPU machine may carry stale git metadata: pass CISA_GIT_HASH=<commit> so the
# provenance of calibration and result files names the commit that ran.
OUT=${OUT:-/tmp/out}
R="$OUT/extras"; mkdir -p "$R"
log() { echo "== $(date +%T) $*" | tee -a "$R/device.log"; }
log build
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS="unit" >"$R/configure.log" 2>&1 || { tail -30 "$R/configure.log"; exit 1; }
cmake --build /tmp/b -j16 --target cisa-measure >"$R/build.log" 2>&1 || { grep -E "error" -A5 "$R/build.log" | head -40; exit 1; }
BIN=/tmp/b/cisa-measure
[ -x /tmp/b/cisa-sim ] && BIN=/tmp/b/cisa-sim
SET="--set hardware=models/gpu/h200_sxm.yaml"
for spec in ${NCU:-}; do
  s=${spec%%:*}; pts=${spec#*:}
  [ -f "$R/${s}.h5" ] || cp results/h200/measured/${s}_device_run.h5 "$R/${s}.h5"
  log "ncu $s points $pts"
  timeout 200 python3 analysis/ncu_points.py "$R/${s}.h5" --binary $BIN --scenario scenarios/$s.yaml \
    --points "$pts" --keep-raw "$R/ncu_raw_$s" 2>&1 | tail -12
done
for s in ${PEERS:-}; do
  [ -f "$R/${s}.h5" ] || cp results/h200/measured/${s}_device_run.h5 "$R/${s}.h5"
  log "peers $s"
  timeout 200 python3 analysis/measure_peers.py "$R/${s}.h5" --reps "${PEER_REPS:-3}" 2>"$R/${s}_peers.log" | tail -4
done
log done
tar -C "$OUT" -czf "$OUT/extras.tar.gz" extras && rm -rf "$R"
