#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build (Release), install cisa-sim onto the
# PATH and the Python module `cisa_sim` for the system Python, then run the default scenario.
#   prefix: $CISA_PREFIX, else /usr/local as root, else ~/.local   (binary in <prefix>/bin)
# The run writes out/ultra_tp2_1m.h5 here (git-ignored); committed results change only through
# scripts/regenerate_results.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
prefix=${CISA_PREFIX:-}
if [ -z "$prefix" ]; then
  if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
fi
cmake --install build/release --prefix "$prefix" >/dev/null
echo "quickstart: installed $prefix/bin/cisa-sim" >&2
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "quickstart: $prefix/bin is not on your PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac
scripts/install-python.sh
"$prefix/bin/cisa-sim" --out out/ultra_tp2_1m.h5 "$@"
