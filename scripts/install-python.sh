#!/usr/bin/env bash
# Makes the Python module `cisa_sim` (python/cisa_sim) importable by the system Python: a .pth
# file naming python/ in its site-packages (user site when not root). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3
if [ "$(id -u)" -eq 0 ]; then
  site=$("$PY" -c 'import site; print(site.getsitepackages()[0])')  # /usr/local/lib/python3.X/dist-packages
else
  site=$("$PY" -m site --user-site)
fi
mkdir -p "$site"
echo "$PWD/python" > "$site/cisa_sim.pth"
echo "install-python: $site/cisa_sim.pth -> $PWD/python (import cisa_sim)" >&2
