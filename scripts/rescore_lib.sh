#!/usr/bin/env bash
# The re-scoring steps shared by scripts/rescore_h200.sh and scripts/rescore_h100.sh (sourced; BIN
# and PY set by the caller): a device run -> <name>_measured.h5 (+ peers' columns, the profiles'
# predictions, ncu bytes) and <name>_report.txt against the current model.
# rescore DIR FILE SCENARIO [--set ...]: FILE (a device run) -> DIR/<name>_measured.h5 and
# DIR/<name>_report.txt. Columns measured beside our kernels (peers: meas_*_peer, meas_*_cudnn,
# meas_*_fa2, meas_*_flex) travel with the file and are compared with their own profiles' predictions.
rescore() {
  local dir=$1 f=$2 scen=$3; shift 3
  local s; s=$(basename "$f" _device_run.h5)
  "$BIN" --scenario scenarios/$scen.yaml "$@" --measurements "$f" --out $dir/${s}_measured.h5 --format csv >/dev/null 2>$dir/.err || { cat $dir/.err; exit 1; }
  "$BIN" --scenario scenarios/$scen.yaml "$@" --measurements "$f" --no-hdf5 2>/dev/null | sed -n '/measured vs predicted/,$p' > $dir/${s}_report.txt
  $PY - "$f" $dir/${s}_measured.h5 <<'PY'
import sys; sys.path.insert(0, "analysis")
import h5py, h5_columns
src, dst = sys.argv[1:3]
peer = ("_peer", "_vs_peer", "_cudnn", "_fa2", "_flex")
with h5py.File(src, "r") as f:
    g = f["points"]
    text = lambda v: v.decode() if isinstance(v, bytes) else str(v)
    cols = {n: (g[n][...], text(g[n].attrs["unit"]), text(g[n].attrs["description"]))
            for n in g if n.startswith("meas_") and n.endswith(peer)}
    attrs = {k: text(f.attrs[k]) for k in f.attrs if k in ("peer_measurement", "peer_forms", "impl_measurement")
             or k.startswith("impl_forms_")}
if cols:
    h5_columns.add_columns(dst, cols, attrs)
PY
  $PY analysis/impl_predictions.py $dir/${s}_measured.h5 --binary "$BIN" --scenario scenarios/$scen.yaml "$@" >/dev/null
  if [ -d $dir/ncu_raw/ncu_raw_$s ]; then
    $PY analysis/ncu_points.py $dir/${s}_measured.h5 --from-raw $dir/ncu_raw/ncu_raw_$s > $dir/${s}_ncu.txt 2>&1 || true
  fi
  rm -f $dir/.err
  echo "$s: $(grep -c 'within target' $dir/${s}_report.txt) lines within target"
}

# rescore_dir DIR SUFFIX [--set ...]: every DIR/<scenario><SUFFIX>_device_run.h5 (SUFFIX marks a
# scenario measured again, e.g. _s12 or _q; "" for none).
rescore_dir() {
  local dir=$1 suffix=$2 f s; shift 2
  for f in $dir/*_device_run.h5; do
    [ -f "$f" ] || continue
    s=$(basename "$f" _device_run.h5)
    rescore $dir "$f" "${s%$suffix}" "$@"
  done
}

