#!/usr/bin/env python3
"""Session 7: the top-k model forms compared on the calibration grid (fit) and the session-6
re-measured sweeps (check), the figures NOTES "Session 7 (lead)" reports. From the repository root:
    python3 results/h200/session7_lead/topk_forms.py
Each form is fitted by relative least squares on the grid's prefill points (the mean of its two
runs) and scored on the grid and on the sweeps' prefill points (measured top-k times only)."""
import math

import h5py
import numpy as np

SMS = 132


def load(path):
    g = h5py.File(path, "r")["points"]
    ph = g["phase"][:].astype(str)
    out = []
    for i in np.where(ph == "terminal_prefill")[0]:
        m = g["meas_ms_topk"][i]
        if np.isfinite(m):
            out.append(dict(rows=g["selections"][i], ne=g["eligible_chunks_mean"][i], K=g["budget_chunks"][i],
                            W=g["window_pages"][i], P=g["prefill_tokens"][i], meas=m * 1e-3))
    return out


def launch(p):
    """The kernel's topk_plan: (CTAs per row, CTAs resident per SM)."""
    nmax = p["ne"] + p["P"] / 16 / 2
    c16 = math.ceil(nmax / 16384)
    if c16 == 1 or p["rows"] * c16 <= SMS:
        return c16, 2
    cl = math.ceil(nmax / 32768)
    return cl, (1 if p["rows"] * cl <= SMS and p["rows"] <= 66 else 2)


def features(p, form):
    ids_row = p["K"] + p["W"] + 2
    if form == "old: waves of one CTA per SM":
        split = 2 if p["ne"] > 32768 else 1
        c = math.ceil(p["ne"] / 16384)
        if c > split and p["rows"] * c <= SMS:
            split = c
        w = math.ceil(p["rows"] * split / SMS)
        return [1, w, w * p["ne"] / split, w * ids_row / split]
    cl, occ = launch(p)
    ctas = p["rows"] * cl
    keys, ids = p["ne"] / cl, ids_row / cl
    w = math.ceil(ctas / (occ * SMS))
    busiest = math.ceil(ctas / SMS / w)
    if form == "co-resident waves, each CTA at its own rate":
        return [1, w, w * keys, w * ids]
    if form == "co-resident waves sharing the SM":
        return [1, w, w * occ * keys, w * occ * ids]
    if form == "SM throughput":
        return [1, w, ctas * keys / SMS, ctas * ids / SMS]
    if form == "busiest SM + cluster merge (kept)":
        return [1, w, w * (cl - 1), w * busiest * keys, w * busiest * ids]
    raise ValueError(form)


def fit(points, form):
    A = np.array([features(p, form) for p in points])
    y = np.array([p["meas"] for p in points])
    x, *_ = np.linalg.lstsq(A / y[:, None], np.ones(len(y)), rcond=None)
    return x


def score(x, points, form):
    A = np.array([features(p, form) for p in points])
    e = A @ x / np.array([p["meas"] for p in points]) - 1
    return "median %4.1f %%, worst %5.1f %%" % (100 * np.median(abs(e)), 100 * max(abs(e)))


r1 = load("results/h200/session7_lead/topk_grid_v2_1.h5")
r2 = load("results/h200/session7_lead/topk_grid_v2_2.h5")
grid = [dict(a, meas=0.5 * (a["meas"] + b["meas"])) for a, b in zip(r1, r2)]
sweeps = [p for n in ("inkling_tp8", "nano_tp1", "ultra_tp2")
          for p in load(f"results/h200/remeasured_s6/{n}_sweep_s6_measured.h5")]
for form in ("old: waves of one CTA per SM", "co-resident waves, each CTA at its own rate",
             "co-resident waves sharing the SM", "SM throughput", "busiest SM + cluster merge (kept)"):
    x = fit(grid, form)
    print("%-45s grid %s | sweeps %s" % (form, score(x, grid, form), score(x, sweeps, form)))
