#!/usr/bin/env bash
# Runs on the GPU machine (device tool), issue 11: the measurements the implementation profiles are
# fitted on and validated against, in one call. Builds cisa-measure (or cisa-sim), runs this
# project's kernels (--measure) on the fit shapes, the held-out set and the Flex sweep, then times
# cuDNN SDPA, FlashAttention-2 SDPA and FlexAttention block-sparse on the same rows
# (analysis/measure_impls.py). Progress on stdout; result files land in $OUT/res/ as each step
# ends, logs in $OUT/logs.tar.gz (updated after every step), so a call cut short still returns what
# it finished.
#   SNAPSHOT=FILE.tar   a `git archive` of the commit to run: unpacked to /tmp/src and built there
#                       (the working-tree copy may hold other agents' unfinished edits)
#   CISA_GIT_HASH=...   the commit, for the provenance of the result files
#   FALLBACK=FILE.tar FALLBACK_HASH=...  a second snapshot, built and run where SNAPSHOT does not build
#   FIT="impl_fit"  HELDOUT="heldout_llama70b_tp4 ..."  FLEX="flex_sweep"   scenario names
#   STEPS="build fit heldout flex impls_heldout impls_flex committed calibrate"  (default: all);
#                       also `calibrate_first` (the calibration right after the build, so a call cut
#                       short still has it) and `remeasure` (this project's kernels on the COMMITTED
#                       scenarios again, e.g. after a kernel change: $OUT/res/<s>.h5)
#   COMMITTED="inkling_tp8_sweep ..."  committed runs (results/h200/measured/<s>_device_run.h5) that
#                       get FlashAttention-2 dense columns (copies, packed in $OUT/committed.tar.gz)
#   DEADLINE=420        seconds after the start; a step that would start later is skipped and each
#                       step's timeout is capped by the time left
#   REPS_FIT=5 REPS=3   timed repetitions per form (fit shapes / the rest)
#   PRESET=h200_sxm     the GPU preset of this card (default: `cisa-sim presets --for-device` on nvidia-smi's name):
#                       calibrate writes $PRESET.calibration.yaml, and every point is priced for it
#                       (--set hardware=$PRESET), so measured and predicted times are of one card
#   For a CPU dry run of this script: STEPS without build, BIN=path/to/cisa-sim MEAS="--measure auto",
#   IMPL_ARGS="--dry-run-timer 1" (measure_impls.py then never imports torch).
set -uo pipefail
START=$(date +%s)
OUT=${OUT:-/tmp/out}
DEADLINE=${DEADLINE:-420}
STEPS=${STEPS:-"build fit heldout flex impls_heldout impls_flex committed calibrate"}
FIT=${FIT:-impl_fit}
HELDOUT=${HELDOUT:-"heldout_llama70b_tp4 heldout_r2_kv4 heldout_mixtral_tp2"}
FLEX=${FLEX:-flex_sweep}
COMMITTED=${COMMITTED:-"inkling_tp8_sweep nano_tp1_sweep ultra_tp2_sweep"}
REPS_FIT=${REPS_FIT:-5}
REPS=${REPS:-3}
RES=/tmp/impl_res
LOGS=/tmp/impl_logs
COMM=/tmp/impl_committed
mkdir -p "$OUT/res" "$RES" "$LOGS" "$COMM"
export PYTHONUNBUFFERED=1

log() { echo "== $(date -u +%T) +$(($(date +%s) - START))s $*" | tee -a "$LOGS/device.log"; }
left() { echo $((DEADLINE - ($(date +%s) - START))); }
pack() { tar -C /tmp -czf "$OUT/logs.tar.gz" impl_logs 2>/dev/null; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
# run_for LIMIT CMD...: runs CMD with a timeout of min(LIMIT, time left); skipped when < 10 s left
run_for() {
  local lim=$1 l; shift
  l=$(left)
  if [ "$l" -lt 10 ]; then log "SKIPPED (deadline): $*"; return 124; fi
  [ "$l" -lt "$lim" ] && lim=$l
  timeout "$lim" "$@"
}
publish() {  # result files to $OUT/res (committed_* copies go to $OUT/committed.tar.gz instead)
  for f in "$@"; do
    [ -f "$RES/$f.h5" ] || continue
    if [[ $f == committed_* ]]; then cp "$RES/$f.h5" "$COMM/"; tar -C /tmp -czf "$OUT/committed.tar.gz" impl_committed
    else cp "$RES/$f.h5" "$OUT/res/$f.h5"; fi
  done
  pack
}

unpack() {  # unpack snapshot $1 to /tmp/src and work there
  local snap
  snap=$(readlink -f "$1")
  rm -rf /tmp/src && mkdir -p /tmp/src && tar -C /tmp/src -xf "$snap" || { echo "cannot unpack $1"; exit 1; }
  cd /tmp/src
}
OLDPWD_ROOT=$(pwd)
[ -n "${SNAPSHOT:-}" ] && unpack "$SNAPSHOT"
log "start in $(pwd), commit ${CISA_GIT_HASH:-unknown}, deadline ${DEADLINE}s, steps: $STEPS"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem,temperature.gpu \
  --format=csv | tee -a "$LOGS/device.log"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuDNN', torch.backends.cudnn.version(), 'triton', triton.__version__, torch.cuda.get_device_name())" 2>&1 | tee -a "$LOGS/device.log"

build_here() {  # configure and build cisa-measure (or cisa-sim) in /tmp/b from the current folder
  rm -rf /tmp/b
  log "configure ($(pwd), commit ${CISA_GIT_HASH:-unknown})"
  cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCISA_TEST_DIRS=unit >"$LOGS/configure.log" 2>&1 \
    || { tail -30 "$LOGS/configure.log"; return 1; }
  log build
  cmake --build /tmp/b -j16 --target cisa-measure >"$LOGS/build.log" 2>&1 && return 0
  cmake --build /tmp/b -j16 --target cisa-sim >>"$LOGS/build.log" 2>&1 && return 0
  grep -E "error|FAILED" -A5 "$LOGS/build.log" | head -40
  return 1
}
BIN=${BIN:-}
if want build && ! build_here; then
  [ -n "${FALLBACK:-}" ] || { pack; exit 1; }
  log "build failed: falling back to $FALLBACK (${FALLBACK_HASH:-unknown})"
  cd "$OLDPWD_ROOT"
  unpack "$FALLBACK"
  export CISA_GIT_HASH=${FALLBACK_HASH:-unknown}
  build_here || { pack; exit 1; }
fi
[ -z "$BIN" ] && [ -x /tmp/b/cisa-measure ] && BIN=/tmp/b/cisa-measure
[ -z "$BIN" ] && [ -x /tmp/b/cisa-sim ] && BIN=/tmp/b/cisa-sim
if [ -z "${MEAS+x}" ]; then MEAS=""; [[ $BIN == */cisa-sim ]] && MEAS="--measure on"; fi
# The card's preset: cisa-sim decides (presets --for-device: the check --measure makes); only
# cisa-measure, which has no `presets`, falls back to the names below.
if [ -z "${PRESET:-}" ]; then
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  if [ -z "$GPU_NAME" ]; then
    PRESET=h200_sxm  # no GPU (a CPU dry run)
  elif [[ $BIN == */cisa-sim ]]; then
    PRESET=$("$BIN" presets --for-device "$GPU_NAME") || { log "no preset for '$GPU_NAME'"; pack; exit 2; }
  else
    case "$GPU_NAME" in
      *H100*) PRESET=h100_sxm ;; *B200*) PRESET=b200 ;; *B300*) PRESET=b300 ;; *) PRESET=h200_sxm ;;
    esac
  fi
fi
log "preset $PRESET (device '${GPU_NAME:-given}')"
log "binary: ${BIN:-none}"

measure() {  # this project's kernels on every point of scenario $1
  local s=$1
  [ -n "$BIN" ] || { log "no binary: $s not measured"; return 1; }
  log "measure $s"
  run_for 240 "$BIN" --scenario "scenarios/$s.yaml" --set hardware=$PRESET $MEAS --out "$RES/$s.h5" >"$LOGS/${s}_measure.log" 2>&1
  echo "rc=$?"; grep -v "points, .* s, ETA" "$LOGS/${s}_measure.log" | tail -4
  publish "$s"
}
impls() {  # measure_impls.py on result $1 for implementations $2 with $3 reps
  local s=$1 which=$2 reps=$3 lim=${4:-300}
  [ -f "$RES/$s.h5" ] || { log "no result file for $s: impls skipped"; return 1; }
  log "impls $which on $s"
  run_for "$lim" python3 analysis/measure_impls.py "$RES/$s.h5" --impls "$which" --reps "$reps" ${IMPL_ARGS:-} \
    >"$LOGS/${s}_impls_${which//,/_}.out" 2>"$LOGS/${s}_impls_${which//,/_}.log"
  echo "rc=$?"; grep -E "^\[|skipped|error|failed" "$LOGS/${s}_impls_${which//,/_}.log" | tail -12
  grep -E "shapes timed" "$LOGS/${s}_impls_${which//,/_}.out"
  rm -f "$RES"/.tmp-*
  publish "$s"
}

calibrate_card() {
  [ -n "$BIN" ] || return 1
  log "calibrate (card state at this run)"
  if [ -z "$GPU_NAME" ]; then
    PRESET=h200_sxm  # no GPU (a CPU dry run)
  elif [[ $BIN == */cisa-sim ]]; then
    run_for "${CAL_LIMIT:-240}" "$BIN" calibrate --preset "$PRESET" --out "$LOGS/$PRESET.calibration.yaml" >"$LOGS/calibrate.log" 2>&1
  else
    run_for "${CAL_LIMIT:-240}" "$BIN" --preset "$PRESET" --calibrate "$LOGS/$PRESET.calibration.yaml" >"$LOGS/calibrate.log" 2>&1
  fi
  echo "rc=$?"; tail -3 "$LOGS/calibrate.log"; pack
}
if want calibrate_first; then calibrate_card; fi
if want fit; then measure "$FIT"; impls "$FIT" cudnn,fa2,flex "$REPS_FIT" 150; fi
if want heldout; then for s in $HELDOUT; do measure "$s"; done; fi
if want flex; then measure "$FLEX"; fi
if want impls_heldout; then for s in $HELDOUT; do impls "$s" cudnn,fa2 "$REPS" 120; done; fi
if want impls_flex; then impls "$FLEX" flex,cudnn,fa2 "$REPS" 240; fi
if want committed; then
  for s in $COMMITTED; do
    src=results/h200/measured/${s}_device_run.h5
    [ -f "$src" ] || { log "no $src"; continue; }
    cp "$src" "$RES/committed_$s.h5"
    impls "committed_$s" fa2 "$REPS" 150
  done
fi
if want remeasure; then for s in $COMMITTED; do measure "$s"; done; fi
if want calibrate; then calibrate_card; fi
log done
pack
ls -la "$OUT" "$OUT/res"
