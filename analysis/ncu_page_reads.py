#!/usr/bin/env python3
"""How often CISA prefill attention reads each eligible KV page from DRAM, from Nsight Compute counts.

    ncu_page_reads.py MEASURED.h5 [MEASURED.h5 ...] [--markdown]

For every prefill row that carries ncu columns (analysis/ncu_points.py, kept by the rescore scripts),
prints the model's CISA attention DRAM bytes and the counted ones, and per (sequence, KV head)
stream: its attention work items (selections x tiles), the pick probability p = K / N_e, the DRAM
reads per eligible page (counted bytes / (streams x N_e x page bytes)), the picks per eligible page
(selections x K / N_e) and the share of picked-page requests served by L2 (1 - reads / picks).
The window, tail, Q, O and block-table bytes are in the counted bytes too: at these shapes they are
a few per cent of them. A page is 16 tokens of K and V of one KV head (head dim from the file).

The question it answers (NOTES "Session 22"): which L2 sharing the CISA attention byte model
should assume between the co-resident work items of a stream. Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"ncu_page_reads.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

NEEDED = ("phase", "context_tokens", "batch", "prefill_tokens", "budget_chunks", "qshare_g", "kv_heads",
          "q_heads", "head_dim", "window_pages", "tile_rows_cisa", "selections", "eligible_chunks_mean",
          "chunk_tokens", "pred_dram_bytes_attention_cisa", "ncu_dram_read_bytes_attention_cisa")


def fail(msg: str) -> None:
    sys.stderr.write(f"ncu_page_reads.py: {msg}\n")
    sys.exit(2)


def text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def read_columns(path: str, names, optional=(), on_error=None) -> dict:
    """The /points columns `names` (all required) and those of `optional` the file has; a bad file
    goes to on_error(message) (default: this script's exit 2). Shared with l2_trace_sim.py."""
    err = on_error or fail
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        err(f"{path}: cannot open ({e})")
    with f:
        if "points" not in f:
            err(f"{path}: no /points group")
        g = f["points"]
        missing = [c for c in names if c not in g]
        if missing:
            err(f"{path}: /points lacks {', '.join(missing)}")
        return {c: g[c][...] for c in list(names) + [o for o in optional if o in g]}


def rows_of(path: str) -> list:
    has = read_columns(path, (), optional=("ncu_dram_read_bytes_attention_cisa",))
    if "ncu_dram_read_bytes_attention_cisa" not in has:
        return []
    col = read_columns(path, NEEDED)
    out = []
    for i in range(len(col["phase"])):
        ncu = float(col["ncu_dram_read_bytes_attention_cisa"][i])
        if text(col["phase"][i]) != "terminal_prefill" or not math.isfinite(ncu):
            continue
        k = float(col["budget_chunks"][i])
        ne = float(col["eligible_chunks_mean"][i]) - float(col["window_pages"][i])
        if ne <= k:
            continue  # dense path: nothing selected
        streams = float(col["batch"][i]) * float(col["kv_heads"][i])
        r = float(col["q_heads"][i]) / float(col["kv_heads"][i])
        tiles = math.ceil(float(col["qshare_g"][i]) * r / float(col["tile_rows_cisa"][i]))
        sel = float(col["selections"][i]) / streams
        page = float(col["chunk_tokens"][i]) * 2.0 * float(col["head_dim"][i]) * 2.0  # K + V, BF16
        reads = ncu / (streams * ne * page)
        picks = sel * k / ne
        out.append({"file": os.path.basename(path).replace("_measured.h5", ""), "point": i,
                    "L": int(col["context_tokens"][i]), "B": int(col["batch"][i]),
                    "P": int(col["prefill_tokens"][i]), "K": int(k), "G": int(col["qshare_g"][i]),
                    "kv": int(col["kv_heads"][i]), "tile": int(col["tile_rows_cisa"][i]),
                    "items": sel * tiles, "p": k / ne, "model_gb": col["pred_dram_bytes_attention_cisa"][i] / 1e9,
                    "ncu_gb": ncu / 1e9, "reads": reads, "picks": picks, "l2_share": 1.0 - reads / picks})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="measured result files (.h5) with ncu columns")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    a = ap.parse_args(argv)
    rows = [r for p in a.files for r in rows_of(p)]
    if not rows:
        print("no prefill row with ncu CISA attention bytes")
        return 0
    head = ("file", "pt", "L", "B", "P", "K", "G", "kv", "tile", "items/stream", "p", "model GB", "ncu GB",
            "model/ncu", "reads/page", "picks/page", "L2 share")
    fmt = lambda r: (r["file"], str(r["point"]), str(r["L"]), str(r["B"]), str(r["P"]), str(r["K"]), str(r["G"]),
                     str(r["kv"]), str(r["tile"]), f"{r['items']:.0f}", f"{r['p']:.3f}", f"{r['model_gb']:.2f}",
                     f"{r['ncu_gb']:.2f}", f"{r['model_gb'] / r['ncu_gb']:.2f}", f"{r['reads']:.2f}",
                     f"{r['picks']:.1f}", f"{r['l2_share']:.2f}")
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(fmt(r)) + " |")
    else:
        w = [max(len(h), *(len(fmt(r)[j]) for r in rows)) for j, h in enumerate(head)]
        print("  ".join(h.rjust(w[j]) for j, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.rjust(w[j]) for j, c in enumerate(fmt(r))))
    ratio = np.array([r["model_gb"] / r["ncu_gb"] for r in rows])
    print(f"\n{len(rows)} rows: model / ncu median {np.median(ratio):.2f}, range {ratio.min():.2f}-{ratio.max():.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
