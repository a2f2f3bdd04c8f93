#!/usr/bin/env bash
# Session 12, second diagnostic call: is the in-step projection's slowness the host's cuBLAS call
# exposed (the GPU drained before the GEMM is submitted) or the GPU's state after idling? The same
# points measured normally, queued behind a 1 ms spin kernel after each flush
# (CISA_MEASURE_QUEUE_US=1000: the whole repetition submitted before the GPU reaches it), idle 2 ms
# then queued (settle + queue), and the whole of held-out v10 queued (every component).
#   PREBUILT=.dev/cli bash results/h200/session12_other/run2.sh   -> $OUT/s12b.tar.gz
set -uo pipefail
START=$(date +%s)
R=$OUT
D=/tmp/s12b
mkdir -p "$D"
export LD_LIBRARY_PATH="$(readlink -f "$PREBUILT")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=$(readlink -f "$PREBUILT")/cisa-sim
log() { echo "== $(date -u +%T) +$(($(date +%s) - START))s $*" | tee -a "$D/diag.log"; }
pack() { tar -C /tmp -czf "$R/s12b.tar.gz.part" s12b && mv "$R/s12b.tar.gz.part" "$R/s12b.tar.gz"; }
run() {  # run MODE SCENARIO POINTS [ENV...]
  local mode=$1 s=$2 pts=$3; shift 3
  log "$mode $s points ${pts:-all}"
  env ${pts:+CISA_MEASURE_ONLY=$pts} "$@" timeout 150 "$BIN" --scenario scenarios/$s.yaml --measure on \
    --out "$D/${s}_$mode.h5" --format none >>"$D/diag.log" 2>&1
  log "rc=$?"
}
for round in 1 2; do
  run normal$round heldout10_r4_kv3 4,5,6,7
  run normal$round heldout10_r5_kv2 0,1,2,3,4,5,6,7
  run queued$round heldout10_r4_kv3 4,5,6,7 CISA_MEASURE_QUEUE_US=1000
  run queued$round heldout10_r5_kv2 0,1,2,3,4,5,6,7 CISA_MEASURE_QUEUE_US=1000
  run settlequeued$round heldout10_r4_kv3 4,5,6,7 CISA_MEASURE_SETTLE_MS=2 CISA_MEASURE_QUEUE_US=1000
  run settlequeued$round heldout10_r5_kv2 0,1,2,3,4,5,6,7 CISA_MEASURE_SETTLE_MS=2 CISA_MEASURE_QUEUE_US=1000
done
pack
for s in heldout10_r18_kv1 heldout10_r5_kv2 heldout10_r4_kv3; do run queuedall $s "" CISA_MEASURE_QUEUE_US=1000; done
pack
