#!/usr/bin/env bash
# The tracked tree (~66 MB) plus a carried prebuilt bundle is over the device tool's 64 MiB: move
# the folders no device call reads aside before a call (`out`) and back after it (`in`).
# Usage: scripts/device_slim.sh out|in   (SLIM_DIR: where they wait, default /tmp/cisa_slim)
set -euo pipefail
cd "$(dirname "$0")/.."
D=${SLIM_DIR:-/tmp/cisa_slim}
# results/h200/measured stays (device_impls.sh's `committed` step reads it); the rest of results/ is
# only read here. slim_paths DIR: those of them under DIR (the tree for `out`, $D for `in`).
slim_paths() {
  (cd "$1" 2>/dev/null && ls -d results/figures results/h100 results/plan results/h200/heldout* \
    results/h200/session* results/h200/remeasured_s* results/h200/impls* results/h200/kern14_run* \
    results/h200/attn14_run* 2>/dev/null)
}
case ${1:-} in
  out)
    for p in $(slim_paths .); do
      [ -e "$D/$p" ] && { echo "device_slim: $D/$p already there: run '$0 in' first" >&2; exit 1; }
      [ -e "$p" ] && mkdir -p "$D/$(dirname "$p")" && mv "$p" "$D/$p"
    done ;;
  in)
    for p in $(slim_paths "$D"); do
      if [ -e "$D/$p" ]; then mv "$D/$p" "$p"; fi
    done ;;
  *) echo "usage: $0 out|in" >&2; exit 2 ;;
esac
