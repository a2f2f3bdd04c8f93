#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build (Release), run the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
mkdir -p results
build/release/cisa-sim --out results/ultra_tp2_1m.h5 "$@"
