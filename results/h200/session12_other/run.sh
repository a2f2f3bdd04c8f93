#!/usr/bin/env bash
# Session 12, final device call: (1) why the index projection measures up to 1.6x slower inside
# some steps than at the same GEMM shape in others (held-out v10: slower after long attention):
# the same points of held-out v10 measured normally (SM clock and power logged every 50 ms), with
# the GPU idle 2 ms before each repetition (CISA_MEASURE_SETTLE_MS), and with only `other` timed
# (CISA_MEASURE_OTHER_ONLY); (2) the merged kernels' GPU tests and compute-sanitizer (memcheck,
# racecheck, synccheck) through kernels/bench/device_run.sh. Outputs: $OUT/s12.tar.gz (diag/, kern/).
#   PREBUILT=.dev/cli CISA_GIT_HASH=... DEADLINE=540 bash results/h200/session12_other/run.sh
set -uo pipefail
START=$(date +%s)
DEADLINE=${DEADLINE:-540}
R=$OUT
OUT=/tmp/s12
D=$OUT/diag
mkdir -p "$D"
pack() { tar -C /tmp -czf "$R/s12.tar.gz.part" s12 && mv "$R/s12.tar.gz.part" "$R/s12.tar.gz"; }
export LD_LIBRARY_PATH="$(readlink -f "$PREBUILT")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=$(readlink -f "$PREBUILT")/cisa-sim
log() { echo "== $(date -u +%T) +$(($(date +%s) - START))s $*" | tee -a "$D/diag.log"; }
run() {  # run MODE SCENARIO POINTS [ENV...]
  local mode=$1 s=$2 pts=$3; shift 3
  log "$mode $s points $pts"
  env CISA_MEASURE_ONLY=$pts "$@" timeout 120 "$BIN" --scenario scenarios/$s.yaml --measure on \
    --out "$D/${s}_$mode.h5" --format none >>"$D/diag.log" 2>&1
  log "rc=$?"
}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 50 > "$D/smi.csv" 2>&1 &
SMI=$!
for round in 1 2; do
  run normal$round heldout10_r4_kv3 4,5,6,7
  run normal$round heldout10_r5_kv2 0,1,2,3,4,5,6,7
  run settle$round heldout10_r4_kv3 4,5,6,7 CISA_MEASURE_SETTLE_MS=2
  run settle$round heldout10_r5_kv2 0,1,2,3,4,5,6,7 CISA_MEASURE_SETTLE_MS=2
  run otheronly$round heldout10_r4_kv3 4,5,6,7 CISA_MEASURE_OTHER_ONLY=1
  run otheronly$round heldout10_r5_kv2 0,1,2,3,4,5,6,7 CISA_MEASURE_OTHER_ONLY=1
done
kill $SMI 2>/dev/null
LEFT=$((DEADLINE - ($(date +%s) - START)))
pack
log "diagnostics done; $LEFT s left for the tests and sanitizers"
mkdir -p "$OUT/kern"
OUT="$OUT/kern" BK=/tmp/bk STOP_ON_FAIL=1 SAN_TIMEOUT=${SAN_TIMEOUT:-150} timeout $((LEFT - 10)) \
  bash kernels/bench/device_run.sh test sanitize > "$OUT/kern/device_run.log" 2>&1
log "kernels (test sanitize) rc=$?"
cp "$D/diag.log" "$OUT/kern/" 2>/dev/null
pack
