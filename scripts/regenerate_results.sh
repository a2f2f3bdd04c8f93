#!/usr/bin/env bash
# Regenerates the committed results from the current model: the only command that rewrites
# tracked files under results/ (a user's `cisa-sim` run writes to out/ or where --out says).
#   results/<scenario>.h5        the shipped 1M scenarios, the budget schedule, the ceiling scenario
#   results/plan/<plan>.h5, .txt the shipped plan scenarios (HDF5 + the printed tables)
#   results/h200/measured/       re-scored against the model (scripts/rescore_h200.sh), with --measured
#   results/figures/             every report (analysis/render_all.py), with --figures
# Usage: scripts/regenerate_results.sh [--measured] [--figures] [BIN]   (BIN: build/release/cisa-sim)
set -euo pipefail
cd "$(dirname "$0")/.."
measured=0 figures=0 BIN=build/release/cisa-sim
for a in "$@"; do
  case "$a" in
    --measured) measured=1 ;;
    --figures) figures=1 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) BIN=$a ;;
  esac
done
[ -x "$BIN" ] || { echo "regenerate_results: no binary $BIN (build first: cmake --build --preset release)" >&2; exit 2; }
for s in ultra_tp2_1m inkling_tp8_1m nano_tp1_1m budget_schedule ceilings_paper; do
  "$BIN" --scenario "scenarios/$s.yaml" --out "results/$s.h5" --format none
done
for p in plan_ultra_b300 plan_inkling_b300 plan_llama70b_h200; do
  "$BIN" plan --scenario "scenarios/$p.yaml" --out "results/plan/$p.h5" > "results/plan/$p.txt"
done
[ "$measured" = 1 ] && scripts/rescore_h200.sh "$BIN"
[ "$figures" = 1 ] && PATH="$PWD/$(dirname "$BIN"):$PATH" ${PYTHON:-python3} analysis/render_all.py --formats png
echo "regenerate_results: done; review with git diff --stat results/" >&2
