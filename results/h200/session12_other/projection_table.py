#!/usr/bin/python3
"""The index projection's measured time (meas_ms_other_projection, us) at the same points under each
measurement mode of the two diagnostic calls, beside held-out v10 as first measured.
The files are kept packed (call1/h5.tar.xz, call2/h5.tar.xz: the HDF5 files compress 40x).
Run from the repository root: python3 results/h200/session12_other/projection_table.py"""
import glob, os, tarfile, tempfile
import h5py, numpy as np

SRC = "results/h200/session12_other"
HERE = tempfile.mkdtemp()
for call in ("call1", "call2"):
    with tarfile.open(f"{SRC}/{call}/h5.tar.xz") as t:
        t.extractall(HERE)
for s in ["heldout10_r4_kv3", "heldout10_r5_kv2"]:
    o = h5py.File(f"results/h200/heldout10/{s}_device_run.h5", "r")["points"]
    cols = {}
    for call in ("call1", "call2"):
        for f in sorted(glob.glob(f"{HERE}/{call}/{s}_*.h5")):
            mode = f"{call}:" + os.path.basename(f)[len(s) + 1:-3]
            if "queuedall" in mode:
                continue
            d = h5py.File(f, "r")["points"]
            cols[mode] = {int(i): p * 1e3 for i, p in zip(d["point_index"][...], d["meas_ms_other_projection"][...])
                          if not np.isnan(p)}
    print(s)
    print("  point  B     K   G  attn ms  v10  " + " ".join(f"{m:>20s}" for m in cols))
    for i in sorted(next(iter(cols.values()))):
        row = f"  {i:5d} {int(o['batch'][i]):2d} {int(o['budget_chunks'][i]):5d} {int(o['qshare_g'][i]):3d} " \
              f"{o['meas_ms_attention_cisa'][i]:8.1f} {o['meas_ms_other_projection'][i] * 1e3:5.1f} "
        print(row + " ".join(f"{cols[m].get(i, float('nan')):20.1f}" for m in cols))
