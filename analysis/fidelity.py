#!/usr/bin/env python3
"""Fidelity of the model against measured result files, fit and held-out sets apart.

    fidelity.py [--set NAME=FILE[,FILE...]]... [--markdown]

For every measured component of this project's kernels (meas_ms_*, compared with its predicted twin:
pred_ms_attention_dense_own for our dense kernel, pred_speedup_*_vs_own for the like-for-like
speedups) and for the peers measured on the same card (meas_ms_attention_dense_peer = cuDNN vs
pred_ms_attention_dense_cudnn; meas_ms_attention_dense_<impl> and meas_ms_attention_cisa_<impl> from
analysis/measure_impls.py vs the matching pred column when the file was evaluated with that profile),
prints per set and phase: points, median and worst |measured / predicted - 1|, the share of points
whose measurement lies in the predicted band [lo / 1.05, hi x 1.05] (the _lo/_hi columns), and the
median band width hi / lo. Medians of even counts average the middle pair.

Exit codes: 0 ok, 2 bad input (missing file or columns), 1 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"fidelity.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

SLACK = 1.05
# measured column -> (predicted column, band column prefix or None)
PAIRS = {
    "meas_ms_attention_dense": ("pred_ms_attention_dense_own", "pred_ms_attention_dense_own"),
    "meas_ms_attention_cisa": ("pred_ms_attention_cisa", "pred_ms_attention_cisa"),
    "meas_ms_scoring": ("pred_ms_scoring", "pred_ms_scoring"),
    "meas_ms_topk": ("pred_ms_topk", "pred_ms_topk"),
    "meas_ms_setup": ("pred_ms_setup", "pred_ms_setup"),
    "meas_ms_other": ("pred_ms_other", "pred_ms_other"),
    "meas_ms_busy_cisa": ("pred_ms_busy_cisa", "pred_ms_busy_cisa"),
    "meas_speedup_attention": ("pred_speedup_attention_vs_own", "pred_speedup_attention_vs_own"),
    "meas_speedup_busy": ("pred_speedup_busy_vs_own", "pred_speedup_busy_vs_own"),
    "meas_ms_attention_dense_peer": ("pred_ms_attention_dense_cudnn", "pred_ms_attention_dense_cudnn"),
    "meas_ms_attention_dense_cudnn": ("pred_ms_attention_dense_cudnn", "pred_ms_attention_dense_cudnn"),
    "meas_ms_attention_dense_fa2": ("pred_ms_attention_dense_fa2", "pred_ms_attention_dense_fa2"),
    "meas_ms_attention_cisa_flex": ("pred_ms_attention_cisa_flex", "pred_ms_attention_cisa_flex"),
}


class InputError(Exception):
    pass


def median(x):
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    if n == 0:
        return float("nan")
    return float(x[n // 2]) if n % 2 else float(0.5 * (x[n // 2 - 1] + x[n // 2]))


def read(path):
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    try:
        with h5py.File(path, "r") as f:
            if "points" not in f:
                raise InputError(f"{path}: no /points group")
            g = f["points"]
            return {k: (g[k].asstr()[...] if g[k].dtype.kind in "SO" else g[k][...]) for k in g}
    except OSError as e:
        raise InputError(f"{path}: not a readable HDF5 file ({e})") from e


def rows_of(cols, meas):
    pred_name, band = PAIRS[meas]
    if meas not in cols or pred_name not in cols:
        return None
    m = np.asarray(cols[meas], dtype=float)
    p = np.asarray(cols[pred_name], dtype=float)
    ok = np.isfinite(m) & np.isfinite(p) & (p > 0)
    if meas.startswith("meas_ms_") and not meas.endswith(("_peer", "_cudnn", "_fa2", "_flex")):
        ok &= np.array([str(x).startswith("cisa_kernels") for x in cols["cisa_impl"]])
    lo = hi = None
    if band and band + "_lo" in cols:
        lo = np.asarray(cols[band + "_lo"], dtype=float)
        hi = np.asarray(cols[band + "_hi"], dtype=float)
    return m, p, lo, hi, ok


def summarize(files):
    out = {}
    for path in files:
        cols = read(path)
        phases = np.asarray(cols["phase"]).astype(str)
        for meas in PAIRS:
            r = rows_of(cols, meas)
            if r is None:
                continue
            m, p, lo, hi, ok = r
            for ph in np.unique(phases):
                sel = ok & (phases == ph)
                if not sel.any():
                    continue
                acc = out.setdefault((meas, ph), {"err": [], "in": [], "width": []})
                acc["err"].extend(np.abs(m[sel] / p[sel] - 1.0))
                if lo is not None:
                    acc["in"].extend((m[sel] >= lo[sel] / SLACK) & (m[sel] <= hi[sel] * SLACK))
                    acc["width"].extend(hi[sel] / lo[sel])
    return out


def render(name, summary, markdown):
    lines = [f"{name}:"]
    head = ("component", "phase", "points", "median |err|", "worst |err|", "in band", "median hi/lo")
    if markdown:
        lines = [f"**{name}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    else:
        lines.append("  {:<30} {:<17} {:>6} {:>12} {:>11} {:>8} {:>12}".format(*head))
    for (meas, ph), a in sorted(summary.items()):
        e = np.asarray(a["err"])
        inb = f"{100 * np.mean(a['in']):.0f} %" if a["in"] else "-"
        width = f"{median(a['width']):.2f}" if a["width"] else "-"
        cells = (meas[5:], ph, str(len(e)), f"{100 * median(e):.1f} %", f"{100 * e.max():.1f} %", inb, width)
        if markdown:
            lines.append("| " + " | ".join(cells) + " |")
        else:
            lines.append("  {:<30} {:<17} {:>6} {:>12} {:>11} {:>8} {:>12}".format(*cells))
    # The uncertainty target counts every (component, point) pair with a band, all phases together.
    inside = [x for a in summary.values() for x in a["in"]]
    widths = [w for a in summary.values() for w in a["width"]]
    if inside:
        total = (f"all components with a band: {len(inside)} pairs, {100 * np.mean(inside):.0f} % in band, "
                 f"median hi/lo {median(widths):.2f}")
        lines.extend(["", total] if markdown else ["  " + total])
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", default=[], metavar="NAME=FILE[,FILE...]",
                    help="a named set of measured result files (repeatable: fit, held-out, ...)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    if not a.set:
        ap.error("give at least one --set NAME=FILE[,FILE...]")
    try:
        for spec in a.set:
            if "=" not in spec:
                raise InputError(f"--set {spec}: expected NAME=FILE[,FILE...]")
            name, files = spec.split("=", 1)
            print(render(name, summarize([f for f in files.split(",") if f]), a.markdown))
            print()
    except InputError as e:
        sys.stderr.write(f"fidelity.py: error: {e}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
