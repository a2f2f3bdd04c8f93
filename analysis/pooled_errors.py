#!/usr/bin/env python3
"""Median / worst |err| (measured / predicted - 1) per component and phase, pooled over the
*_measured.h5 files given (e.g. one held-out set's three scenarios), and the share of measured busy
times inside the predicted [lo, hi] band (5 % slack). Usage: pooled_errors.py FILE.h5 ..."""
import sys

import h5py
import numpy as np

COMPONENTS = ["busy_cisa", "speedup_busy", "attention_dense", "attention_cisa", "scoring", "topk",
              "setup", "other", "attention_dense_cudnn", "attention_dense_fa2", "attention_cisa_flex"]


def main(files):
    rows = {}
    band = [0, 0]
    for path in files:
        with h5py.File(path, "r") as f:
            g = f["points"]
            phase = np.array([p.decode() if isinstance(p, bytes) else str(p) for p in g["phase"][...]])
            for c in COMPONENTS:
                if "err_" + c not in g:
                    continue
                e = np.abs(g["err_" + c][...])
                for ph in np.unique(phase):
                    v = e[(phase == ph) & np.isfinite(e)]
                    rows.setdefault((c, ph), []).extend(v.tolist())
            if "pred_ms_busy_cisa_lo" in g and "meas_ms_busy_cisa" in g:
                m, lo, hi = (g[n][...] for n in ("meas_ms_busy_cisa", "pred_ms_busy_cisa_lo", "pred_ms_busy_cisa_hi"))
                ok = np.isfinite(m)
                band[0] += int(np.sum((m[ok] >= 0.95 * lo[ok]) & (m[ok] <= 1.05 * hi[ok])))
                band[1] += int(np.sum(ok))
    print(f"{'component':24s} {'phase':18s} {'n':>3s} {'median':>8s} {'worst':>8s}")
    for (c, ph), v in rows.items():
        if v:
            print(f"{c:24s} {ph:18s} {len(v):3d} {100 * np.median(v):7.1f}% {100 * np.max(v):7.1f}%")
    if band[1]:
        print(f"busy CISA in [lo, hi] (5 % slack): {band[0]} of {band[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
