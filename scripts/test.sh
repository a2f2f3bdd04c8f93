#!/usr/bin/env bash
# Command 2 of the README: build every configuration CI checks and run all tests.
#   release (warnings as errors, CUDA kernels compiled when nvcc exists) and asan (ASan+UBSan).
# GPU tests skip with a printed reason on machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
for preset in ci asan; do
  echo "== preset $preset" >&2
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$jobs"
  ctest --preset "$preset" -j"$jobs"
done
# Issue 12: libFuzzer harnesses, about 60 s each (FUZZ_SECONDS), from their committed corpora.
scripts/fuzz.sh
