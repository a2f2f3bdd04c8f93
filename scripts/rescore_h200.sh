#!/usr/bin/env bash
# Re-scores the committed H200 measurements against the current model and H200 preset (no GPU):
# results/h200/measured/<s>_device_run.h5 -> <s>_measured.h5 (+ ncu byte columns where raw
# Nsight Compute outputs were kept) and <s>_report.txt. Usage: scripts/rescore_h200.sh [BIN]
set -euo pipefail
BIN=${1:-build/release/cisa-sim}
PY=${PYTHON:-python3}
D=results/h200/measured
for f in $D/*_device_run.h5; do
  s=$(basename "$f" _device_run.h5)
  "$BIN" --scenario scenarios/$s.yaml --measurements "$f" --out $D/${s}_measured.h5 --format csv >/dev/null 2>$D/.err || { cat $D/.err; exit 1; }
  "$BIN" --scenario scenarios/$s.yaml --measurements "$f" --out /dev/null --no-hdf5 2>/dev/null | sed -n '/measured vs predicted/,$p' > $D/${s}_report.txt
  # Peer columns measured in the device run travel with the re-scored file.
  $PY - "$f" $D/${s}_measured.h5 <<'PY'
import sys; sys.path.insert(0, "analysis")
import h5py, h5_columns
src, dst = sys.argv[1:3]
with h5py.File(src, "r") as f:
    g = f["points"]
    cols = {n: (g[n][...], g[n].attrs["unit"].decode() if isinstance(g[n].attrs["unit"], bytes) else str(g[n].attrs["unit"]),
                g[n].attrs["description"].decode() if isinstance(g[n].attrs["description"], bytes) else str(g[n].attrs["description"]))
            for n in g if n.endswith("_peer") and n.startswith(("meas_", "err_")) or n.endswith("_vs_peer") and n.startswith("meas_")}
    attrs = {k: (f.attrs[k].decode() if isinstance(f.attrs[k], bytes) else str(f.attrs[k])) for k in ("peer_measurement", "peer_forms") if k in f.attrs}
if cols:
    h5_columns.add_columns(dst, cols, attrs)
PY
  if [ -d $D/ncu_raw/ncu_raw_$s ]; then
    $PY analysis/ncu_points.py $D/${s}_measured.h5 --from-raw $D/ncu_raw/ncu_raw_$s > $D/${s}_ncu.txt 2>&1 || true
  fi
  echo "$s: $(grep -c 'within target' $D/${s}_report.txt) lines within target"
done
rm -f $D/.err
