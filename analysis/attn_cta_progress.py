#!/usr/bin/env python3
"""Do co-resident CISA attention CTAs of a stream walk their page lists in step? From the CTA
progress record (cisa-sim --measure with CISA_MEASURE_CTA_TIMES=DIR).

    attn_cta_progress.py DIR RESULT.h5 [--markdown]

DIR holds point_<i>_attn_ctas.csv or .csv.gz (cta, sm, work, tiles, then ns from the launch's first start to the
CTA's start, its tiles ntiles/4, /2, 3/4 and its end; -1 where not reached); RESULT.h5 is the file the
same run wrote (batch and KV heads per point). Works are planned stream by stream ((sequence, KV head),
then QShare group), so a work's stream is work // (works / streams).

Per point prints: CTAs, streams, start waves (runs of starts less than 2 % of the median CTA duration
apart), the median CTA duration and its spread (dur_cv), the launch's span; for the CTAs of each
(wave, stream) group with at least 4 members, the median relative spread of the time to reach the
half and the end of their tiles (spread_q2, spread_end); and over every pair of CTAs of one stream
that run at the same time: the later partners per CTA (coresident), the median and 75th percentile
of their start offsets in median durations, and the share of pairs that start less than 5 % of a
duration apart (lockstep_share). Pairs in step read a page close together in time, so the L2 serves
the later reads; the CISA byte model's L2 sharing depends on it (NOTES "Session 22").
Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import glob
import gzip
import os
import re
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"attn_cta_progress.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)


def fail(msg: str) -> None:
    sys.stderr.write(f"attn_cta_progress.py: {msg}\n")
    sys.exit(2)


def read_csv(path: str) -> dict:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail(f"{path}: no CTA rows")
    need = ("cta", "sm", "work", "tiles", "start_ns", "q1_ns", "q2_ns", "q3_ns", "end_ns")
    missing = [c for c in need if c not in rows[0]]
    if missing:
        fail(f"{path}: missing columns {', '.join(missing)}")
    return {c: np.array([float(r[c]) for r in rows]) for c in need}


def point_axes(result: str) -> dict:
    try:
        with h5py.File(result, "r") as f:
            g = f["points"]
            idx = g["point_index"][...]
            return {int(i): (int(b), int(k), float(ms)) for i, b, k, ms in
                    zip(idx, g["batch"][...], g["kv_heads"][...], g["meas_ms_attention_cisa"][...])}
    except (OSError, KeyError) as e:
        fail(f"{result}: cannot read /points batch, kv_heads, point_index ({e})")


def waves_of(start: np.ndarray, dur: float) -> np.ndarray:
    """Wave number per CTA: starts sorted; a gap longer than 2 % of a duration opens a new wave."""
    order = np.argsort(start)
    wave = np.zeros(len(start), dtype=int)
    w = 0
    for a, b in zip(order[:-1], order[1:]):
        if start[b] - start[a] > 0.02 * dur:
            w += 1
        wave[b] = w
    return wave


def coresident_offsets(start, end, stream, streams, dmed) -> tuple:
    """Start offsets (in median durations) of every pair of CTAs of one stream that run at the same
    time (the later one starts before the earlier one ends), and the mean number of such later
    partners per CTA. Offsets near 0: the pair walks its sorted page lists in step."""
    offs, partners = [], []
    for k in range(streams):
        idx = np.where(stream == k)[0]
        order = idx[np.argsort(start[idx])]
        a, b = start[order], end[order]
        for i in range(len(a)):
            j = int(np.searchsorted(a, b[i], side="left"))  # later CTAs that start before i ends
            offs.extend(((a[i + 1:j] - a[i]) / dmed).tolist())
            partners.append(max(0, j - i - 1))
    return np.array(offs), (float(np.mean(partners)) if partners else 0.0)


def summarize(path: str, axes: dict) -> dict:
    m = re.search(r"point_(\d+)_attn_ctas\.csv(\.gz)?$", path)
    point = int(m.group(1))
    c = read_csv(path)
    if point not in axes:
        fail(f"{path}: point {point} not in the result file")
    batch, kv, meas_ms = axes[point]
    streams = batch * kv
    n_work = int(c["work"].max()) + 1
    per_stream = max(1, n_work // streams)
    stream = (c["work"] // per_stream).astype(int)
    dur = c["end_ns"] - c["start_ns"]
    dmed = float(np.median(dur))
    wave = waves_of(c["start_ns"], dmed)
    spreads = {k: [] for k in ("start", "q1", "q2", "q3", "end")}
    for key in set(zip(wave, stream)):
        sel = (wave == key[0]) & (stream == key[1])
        if sel.sum() < 4:
            continue
        s0 = c["start_ns"][sel]
        spreads["start"].append(np.std(s0) / dmed)
        for mark in ("q1", "q2", "q3", "end"):
            t = c[f"{mark}_ns"][sel]
            ok = t >= 0
            if ok.sum() < 4:
                continue
            reach = t[ok] - s0[ok]
            spreads[mark].append(np.std(reach) / np.median(reach))
    med = {k: (float(np.median(v)) if v else float("nan")) for k, v in spreads.items()}
    offs, per_cta = coresident_offsets(c["start_ns"], c["end_ns"], stream, streams, dmed)
    return {"point": point, "ctas": len(dur), "streams": streams, "waves": int(wave.max()) + 1,
            "dur_us": dmed / 1e3, "dur_cv": float(np.std(dur) / dmed), "kernel_ms": meas_ms,
            "span_ms": float((c["end_ns"].max() - c["start_ns"].min()) / 1e6),
            "groups": len(spreads["start"]), **{f"spread_{k}": v for k, v in med.items()},
            "coresident": per_cta,
            "offset_median": float(np.median(offs)) if len(offs) else float("nan"),
            "offset_p75": float(np.percentile(offs, 75)) if len(offs) else float("nan"),
            "lockstep_share": float(np.mean(offs < 0.05)) if len(offs) else float("nan")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="folder of point_<i>_attn_ctas.csv")
    ap.add_argument("result", help="the run's result file (.h5)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    files = sorted(glob.glob(os.path.join(a.dir, "point_*_attn_ctas.csv")) +
                   glob.glob(os.path.join(a.dir, "point_*_attn_ctas.csv.gz")),
                   key=lambda p: int(re.search(r"point_(\d+)_", p).group(1)))
    if not files:
        fail(f"{a.dir}: no point_<i>_attn_ctas.csv")
    axes = point_axes(a.result)
    rows = [summarize(p, axes) for p in files]
    head = ["point", "ctas", "streams", "waves", "dur_us", "dur_cv", "span_ms", "groups", "spread_q2",
            "spread_end", "coresident", "offset_median", "offset_p75", "lockstep_share"]
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)
    if a.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(fmt(r[h]) for h in head) + " |")
    else:
        print("  ".join(f"{h:>12s}" for h in head))
        for r in rows:
            print("  ".join(f"{fmt(r[h]):>12s}" for h in head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
