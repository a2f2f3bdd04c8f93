#!/usr/bin/env bash
# The tracked tree (~66 MB) plus a carried prebuilt bundle is over the device tool's 64 MiB: move
# the folders no device call reads aside before a call (`out`) and back after it (`in`).
# Usage: scripts/device_slim.sh out|in   (SLIM_DIR: where they wait, default /tmp/cisa_slim)
set -euo pipefail
cd "$(dirname "$0")/.."
D=${SLIM_DIR:-/tmp/cisa_slim}
PATHS="results/figures results/h200/remeasured_s5 results/h200/remeasured_s6 results/h200/remeasured_s7"
case ${1:-} in
  out)
    for p in $PATHS; do
      [ -e "$D/$p" ] && { echo "device_slim: $D/$p already there: run '$0 in' first" >&2; exit 1; }
      [ -e "$p" ] && mkdir -p "$D/$(dirname "$p")" && mv "$p" "$D/$p"
    done ;;
  in)
    for p in $PATHS; do
      if [ -e "$D/$p" ]; then mv "$D/$p" "$p"; fi
    done ;;
  *) echo "usage: $0 out|in" >&2; exit 2 ;;
esac
