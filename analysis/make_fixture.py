#!/usr/bin/env python3
"""Writes a small synthetic cisa-sim HDF5 result file in the documented layout.

The numbers follow the CISA traffic model roughly (bytes from the method's formulas, times
from a simple roofline) so that the figures look like real ones; they are NOT the simulator's
output. Used by tests/analysis and to preview figures before real result files exist.

    make_fixture.py OUT.h5 [--no-measured] [--no-plan] [--no-hw-peaks] [--models A,B] [--vlen-strings]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover - environment check
    sys.exit(f"make_fixture.py: missing Python module ({e.name}); install python3-h5py "
             "python3-numpy (scripts/install-deps.sh does)")

BW_TBS = 4.48      # H200 measured HBM read bandwidth (docs/h200-facts.md)
PEAK_TFS = 801.0   # H200 measured BF16 dense GEMM
TILE_M = 128

MODELS = {  # per tensor-parallel rank
    "inkling-small": dict(q_heads=4, kv_heads=1),
    "nemotron-3-ultra": dict(q_heads=32, kv_heads=1),
}
CONTEXTS = [1 << 17, 1 << 18, 1 << 19, 1 << 20]
BUDGETS = [1024, 4096]


def ceilings(L, K, c, G):
    """Near-end prefill, full prefill and decode ceilings (method §3)."""
    def near(g):
        return 2 * L / (2 * K * c + L / (c * g))
    T = K * c
    if L <= T:
        full = 1.0
    else:
        full = L * L / (T * T + 2 * K * c * (L - T) + (L * L - T * T) / (2 * c * G))
    return near(G), full, near(1)


def one_point(model, phase, L, K, G, batch, geo, c=16, W=128, d=128, P=512):
    hq, hkv = geo["q_heads"], geo["kv_heads"]
    r = hq // hkv
    N = L // c
    Ne = max(0, N - W)
    if phase == "decode":
        G, P = 1, 1
    elif phase == "mtp":
        P = G
    queries = P
    sel = math.ceil(queries / G) * batch * hkv          # selections per forward
    sparse = Ne > K
    kv_tokens_cisa = min(L, (K + W) * c + c // 2) if sparse else L
    # bytes (time view, tiled kernel): dense reads each KV head's history once per forward
    b_dense = batch * hkv * 2 * d * 2 * L
    b_cisa = sel * 2 * d * 2 * kv_tokens_cisa
    b_rep = sel * Ne * d * 2 if sparse else 0
    b_meta = sel * (8 * Ne + 8 * (K + W + 1)) if sparse else batch * hkv * 4 * (L // c)
    rows = r * queries
    fl_dense = batch * hkv * 4 * d * L * math.ceil(rows / TILE_M) * TILE_M
    fl_cisa = sel * 4 * d * kv_tokens_cisa * math.ceil(G * r / TILE_M) * TILE_M

    def t_ms(nbytes, flops, eff_bw=0.9, eff_fl=0.75):
        return 1e3 * max(nbytes / (BW_TBS * 1e12 * eff_bw), flops / (PEAK_TFS * 1e12 * eff_fl))

    att_d = t_ms(b_dense, fl_dense) + 0.01
    att_c = t_ms(b_cisa, fl_cisa, eff_bw=0.7) + 0.01
    scoring = t_ms(b_rep, sel * 2 * d * Ne, eff_bw=0.8) + (0.005 if sparse else 0.0)
    topk = (sel * Ne * 8) / (BW_TBS * 1e12 * 0.3) * 1e3 + (0.01 if sparse else 0.0)
    setup = 0.004 + b_meta / (BW_TBS * 1e12 * 0.5) * 1e3
    other = 0.02 + 0.002 * att_d          # CISA other: index projection, rep update
    busy_d = att_d + 0.005                # dense: attention + block-table setup (not exported)
    busy_c = att_c + scoring + topk + setup + other
    near, full, dec = ceilings(L, K, c, G)
    return dict(
        model=model, hardware="h200", phase=phase,
        context_tokens=L, budget_chunks=K, qshare_g=G, batch=batch, q_heads=hq,
        kv_heads=hkv, head_dim=d, chunk_tokens=c, window_pages=W,
        prefill_tokens=P if phase in ("terminal_prefill", "full_prefill") else 0,
        bytes_kv_dense=float(b_dense), bytes_kv_cisa=float(b_cisa), bytes_rep=float(b_rep),
        bytes_meta=float(b_meta),
        pred_ms_attention_dense=att_d, pred_ms_attention_cisa=att_c, pred_ms_scoring=scoring,
        pred_ms_topk=topk, pred_ms_setup=setup, pred_ms_other=other,
        pred_ms_busy_dense=busy_d, pred_ms_busy_cisa=busy_c,
        pred_speedup_attention=att_d / att_c, pred_speedup_busy=busy_d / busy_c,
        nominal_compression=L / (K * c), ceiling_near_end_prefill=near,
        ceiling_full_prefill=full, ceiling_decode=dec,
        flops_attention_dense=float(fl_dense), flops_attention_cisa=float(fl_cisa),
        pred_basis="calibrated", score_agg="sum", selection_overlap=0.0,
    )


COLUMNS = [  # name, kind, unit, description
    ("model", "s", "", "model preset"),
    ("hardware", "s", "", "GPU preset"),
    ("phase", "s", "", "terminal_prefill | full_prefill | decode | mtp"),
    ("context_tokens", "i", "tokens", "history length L"),
    ("budget_chunks", "i", "chunks", "chunk budget K"),
    ("qshare_g", "i", "positions", "QShare group size G"),
    ("batch", "i", "sequences", "batch size"),
    ("q_heads", "i", "heads", "query heads per rank"),
    ("kv_heads", "i", "heads", "KV heads per rank"),
    ("head_dim", "i", "elements", "head dimension d"),
    ("chunk_tokens", "i", "tokens", "chunk size c"),
    ("window_pages", "i", "pages", "recent window W"),
    ("prefill_tokens", "i", "tokens", "prefill positions per sequence in this forward"),
    ("bytes_kv_dense", "f", "bytes", "dense K/V bytes per layer per forward (time view)"),
    ("bytes_kv_cisa", "f", "bytes", "CISA K/V bytes per layer per forward (time view)"),
    ("bytes_rep", "f", "bytes", "representative bytes read"),
    ("bytes_meta", "f", "bytes", "scores, page IDs, block table bytes"),
]
for comp in ("attention_dense", "attention_cisa", "scoring", "topk", "setup", "other",
             "busy_dense", "busy_cisa"):
    COLUMNS.append((f"pred_ms_{comp}", "f", "ms", f"predicted {comp} time"))
COLUMNS += [("pred_speedup_attention", "f", "x", "predicted dense/CISA core attention"),
            ("pred_speedup_busy", "f", "x", "predicted dense/CISA GPU busy")]
for comp in ("attention_dense", "attention_cisa", "scoring", "topk", "setup", "other",
             "busy_dense", "busy_cisa"):
    COLUMNS.append((f"meas_ms_{comp}", "f", "ms", f"measured {comp} time (NaN: not measured)"))
COLUMNS += [("meas_speedup_attention", "f", "x", "measured dense/CISA core attention"),
            ("meas_speedup_busy", "f", "x", "measured dense/CISA GPU busy"),
            ("nominal_compression", "f", "x", "L/(K*c) (ceiling view)"),
            ("ceiling_near_end_prefill", "f", "x", "near-end prefill ceiling (ceiling view)"),
            ("ceiling_full_prefill", "f", "x", "full-prefill ceiling (ceiling view)"),
            ("ceiling_decode", "f", "x", "decode ceiling, G=1 (ceiling view)"),
            ("flops_attention_dense", "f", "FLOP", "issued FLOPs, dense attention"),
            ("flops_attention_cisa", "f", "FLOP", "issued FLOPs, CISA attention"),
            ("pred_basis", "s", "", "calibrated | speed_of_light"),
            ("score_agg", "s", "", "sum | max | last"),
            ("point_index", "i", "", "index of the point in the scenario's full sweep"),
            ("selection_overlap", "f", "fraction", "share of pages chosen by the previous group")]


def build_points(measured: bool, models=None):
    rows = []
    for model, geo in MODELS.items():
        if models and model not in models:
            continue
        main = model == "inkling-small"  # the second model only has two phases (test speed)
        gs = [4, 32] if main else [4]
        for L in CONTEXTS:
            for K in BUDGETS:
                for G in gs:
                    rows.append(one_point(model, "terminal_prefill", L, K, G, 16, geo))
                    if main:
                        rows.append(one_point(model, "full_prefill", L, K, G, 1, geo, P=8192))
                rows.append(one_point(model, "decode", L, K, 1, 16, geo))
                if main:
                    rows.append(one_point(model, "mtp", L, K, 4, 16, geo))
    for i, row in enumerate(rows):
        row["point_index"] = i
    rng = np.random.default_rng(6)
    comps = ("attention_dense", "attention_cisa", "scoring", "topk", "setup", "other",
             "busy_dense", "busy_cisa")
    for row in rows:
        for comp in comps:
            row[f"meas_ms_{comp}"] = math.nan
        row["meas_speedup_attention"] = row["meas_speedup_busy"] = math.nan
        if not measured or row["model"] != "inkling-small":
            continue
        if row["phase"] not in ("terminal_prefill", "decode") or row["context_tokens"] < 1 << 19:
            continue
        for comp in comps[:6]:
            row[f"meas_ms_{comp}"] = row[f"pred_ms_{comp}"] * float(rng.uniform(0.85, 1.2))
        row["meas_ms_busy_dense"] = row["meas_ms_attention_dense"] + 0.006
        row["meas_ms_busy_cisa"] = sum(row[f"meas_ms_{c}"] for c in
                                       ("attention_cisa", "scoring", "topk", "setup", "other"))
        row["meas_speedup_attention"] = row["meas_ms_attention_dense"] / row["meas_ms_attention_cisa"]
        row["meas_speedup_busy"] = row["meas_ms_busy_dense"] / row["meas_ms_busy_cisa"]
    return rows


def build_plan(models=None):
    schedule = {1 << 17: 1024, 1 << 18: 2048, 1 << 19: 4096, 1 << 20: 4096}
    rows = []
    for model in MODELS:
        if models and model not in models:
            continue
        for L, wdt in [(L, w) for L in CONTEXTS + [1 << 16] for w in ("bf16", "fp8")]:
            K = schedule.get(L, 1024)
            kv_per_seq = 7 * 2 * 128 * 2 * L * 8  # layers x K,V x d x bytes x L x kv heads
            free = 100e9 if wdt == "bf16" else 120e9
            dense = int(free // kv_per_seq)
            cisa = int(dense * 0.97)  # representatives take ~1/32 more capacity
            tps_d = 30000.0 * (1 << 17) / L * (1.0 if wdt == "bf16" else 1.3)
            tps_c = tps_d * min(L / (K * 16), 6.0) ** 0.6
            rows.append(dict(model=model, hardware="h200", weight_dtype=wdt, tp=8,
                             context_tokens=L, budget_chunks=K,
                             batch_dense=dense, batch_cisa=cisa,
                             max_concurrency_dense=dense, max_concurrency_cisa=cisa,
                             tokens_per_s_per_gpu_dense=tps_d, tokens_per_s_per_gpu_cisa=tps_c,
                             fits_dense=int(dense > 0), fits_cisa=int(cisa > 0),
                             reason_dense="" if dense > 0 else "KV cache does not fit",
                             reason_cisa="" if cisa > 0 else "KV cache does not fit"))
    rows.sort(key=lambda r: (r["model"], r["context_tokens"], r["weight_dtype"]))
    cols = [("model", "s", "", "model preset"), ("hardware", "s", "", "GPU preset"),
            ("weight_dtype", "s", "", "weight dtype"), ("tp", "i", "GPUs", "tensor parallel"),
            ("context_tokens", "i", "tokens", "context length"),
            ("budget_chunks", "i", "chunks", "chunk budget K from the schedule"),
            ("batch_dense", "i", "sequences", "concurrent sequences per replica, dense"),
            ("batch_cisa", "i", "sequences", "concurrent sequences per replica, CISA"),
            ("fits_dense", "i", "0/1", "fits, dense"), ("fits_cisa", "i", "0/1", "fits, CISA"),
            ("reason_dense", "s", "", "why dense is infeasible"),
            ("reason_cisa", "s", "", "why CISA is infeasible"),
            ("max_concurrency_dense", "i", "sequences", "max concurrent sequences, dense"),
            ("max_concurrency_cisa", "i", "sequences", "max concurrent sequences, CISA"),
            ("tokens_per_s_per_gpu_dense", "f", "tokens/s", "decode throughput per GPU, dense"),
            ("tokens_per_s_per_gpu_cisa", "f", "tokens/s", "decode throughput per GPU, CISA")]
    return rows, cols


def write_group(h5, name, rows, cols, vlen=False):
    """Text columns as fixed-length null-padded UTF-8 (what cisa-sim writes) or, with vlen,
    variable-length UTF-8 (the reader accepts both)."""
    g = h5.create_group(name)
    for col, kind, unit, desc in cols:
        vals = [r[col] for r in rows]
        if kind == "s":
            if vlen:
                ds = g.create_dataset(col, data=np.array(vals, dtype=object),
                                      dtype=h5py.string_dtype("utf-8"))
            else:
                raw = [v.encode("utf-8") for v in vals]
                width = max([1] + [len(b) for b in raw])
                dt = h5py.string_dtype("utf-8", width)
                ds = g.create_dataset(col, data=np.array(raw, dtype=dt))
        elif kind == "i":
            ds = g.create_dataset(col, data=np.array(vals, dtype=np.int64))
        else:
            ds = g.create_dataset(col, data=np.array(vals, dtype=np.float64))
        ds.attrs["unit"] = unit
        ds.attrs["description"] = desc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="output .h5 path")
    ap.add_argument("--no-measured", action="store_true", help="leave every meas_* column NaN")
    ap.add_argument("--no-plan", action="store_true", help="omit the /plan group")
    ap.add_argument("--plan-only", action="store_true",
                    help="only the /plan group (what `cisa-sim plan` writes)")
    ap.add_argument("--no-hw-peaks", action="store_true",
                    help="omit the hw_read_bw_tbs / hw_bf16_tflops attributes")
    ap.add_argument("--vlen-strings", action="store_true",
                    help="variable-length text columns instead of fixed-length")
    ap.add_argument("--models", default="",
                    help=f"comma-separated subset of {', '.join(MODELS)} (default: all)")
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)}")
    rows = build_points(measured=not args.no_measured, models=models)
    with h5py.File(args.out, "w", libver="earliest") as h5:
        attrs = {
            "tool_version": "0.1.0-fixture",
            "git_hash": "000000000000",
            "created_utc": "2026-11-29T12:00:00Z",
            "command_line": "analysis/make_fixture.py " + " ".join(
                [os.path.basename(args.out)] + (argv or sys.argv[1:])[1:]),
            "scenario_yaml": "# synthetic fixture, not a real scenario\nname: fixture\n",
            "hardware_yaml": "name: h200\nread_bw_tbs: 4.48\nbf16_tflops: 801\n",
            "scenario_name": "fixture",
            "hardware": "h200",
        }
        if not args.no_hw_peaks:
            attrs["hw_read_bw_tbs"] = f"{BW_TBS}"
            attrs["hw_bf16_tflops"] = f"{PEAK_TFS}"
        for k, v in attrs.items():
            h5.attrs[k] = v
        if not args.plan_only:
            write_group(h5, "points", rows, COLUMNS, vlen=args.vlen_strings)
        if not args.no_plan:
            prow, pcols = build_plan(models)
            write_group(h5, "plan", prow, pcols, vlen=args.vlen_strings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
