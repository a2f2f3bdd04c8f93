#!/usr/bin/env python3
"""Derives the measured figures of the peer profiles (cudnn, fa2, flex) from their fit shapes.

    fit_profiles.py FIT.h5 --binary BIN --scenario scenarios/impl_fit.yaml [--card h200_sxm]

FIT.h5 is scenarios/impl_fit.yaml measured on the card (analysis/measure_impls.py columns
meas_ms_attention_dense_cudnn / _fa2, meas_ms_attention_cisa_flex): at most three shapes, the only
points these figures are fitted on (held-out discipline). Each figure inverts the term of the
roofline that binds at its shape, with the model's own work counts for that profile (the scenario
evaluated with implementation.dense=<p> or implementation.cisa=flex):

  prefill (compute-bound)  mma_tflops  = issued FLOPs / (time - floor x launches)
  decode (memory-bound)    read_bw_tbs = DRAM bytes / (time - floor x launches)
  flex (both phases)       page_visit_ns = (time - floor) x SMs x fill / visits   (prefill: its tile
                           class; decode: its decoding kernel, which visits every page of the
                           context: profile keys decode_visits, page_visit_ns.decode)

Prints YAML lines to paste into models/impl/<p>.yaml, each labelled MEAS with the file, shape and
date. Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import h5py
    import numpy as np
    from h5_columns import read_points
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"fit_profiles.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

FLOOR_US = {"cudnn": 5.12, "fa2": 5.12, "flex": 5.12}  # the card's isolated-kernel floor (card bench)
SMS = 132
# Flex's prefill CTAs resident per SM and a lone CTA's time per visit (models/impl/flex.yaml
# attention.prefill_ctas_per_sm; the point of the model's band, roofline visit_rounds).
FLEX_CTAS_PER_SM, FLEX_LONE_CTA = 2, 1.5


def visit_rounds(ctas, per_sm, lone):
    """CTA visit-lists at the per-SM visit rate (src/model/roofline.cpp visit_rounds)."""
    if per_sm <= 1:
        return float(-(-ctas // SMS))
    full = ctas // (per_sm * SMS)
    rest = ctas - full * per_sm * SMS
    if rest <= 0:
        return float(full * per_sm)
    j = -(-rest // SMS)
    return full * per_sm + lone + (j - 1) * (per_sm - lone) / (per_sm - 1)


def model(binary, scenario, key, prof):
    cmd = [binary, "--scenario", scenario, "--no-hdf5", "--format", "csv", "--set", f"implementation.{key}={prof}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"fit_profiles.py: error: {' '.join(cmd)}: {proc.stderr.strip()[:300]}")
    return {int(r["point_index"]): r for r in csv.DictReader(io.StringIO(proc.stdout))}


def shape_text(r):
    return (f"{r['phase']} B={r['batch']} L={r['context_tokens']} r={int(r['q_heads']) // int(r['kv_heads'])} "
            f"kv={r['kv_heads']}" + (f" P={r['prefill_tokens']} K={r['budget_chunks']} G={r['qshare_g']}"
                                     if r["phase"] != "decode" else f" K={r['budget_chunks']}"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fit")
    ap.add_argument("--binary", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--card", default="h200_sxm")
    a = ap.parse_args(argv)
    if not os.path.exists(a.fit):
        sys.stderr.write(f"fit_profiles.py: error: {a.fit}: no such file\n")
        return 2
    cols = read_points(a.fit)
    with h5py.File(a.fit, "r") as f:
        when = f.attrs.get("created_utc", b"?")
        when = when.decode() if isinstance(when, bytes) else str(when)
    idx = [int(i) for i in cols["point_index"]]
    jobs = [("cudnn", "dense", "meas_ms_attention_dense_cudnn"), ("fa2", "dense", "meas_ms_attention_dense_fa2"),
            ("flex", "cisa", "meas_ms_attention_cisa_flex")]
    for prof, key, meas in jobs:
        if meas not in cols:
            print(f"# {prof}: no column {meas} in {a.fit}")
            continue
        m = model(a.binary, a.scenario, key, prof)
        side = "dense" if key == "dense" else "cisa"
        print(f"# {prof} ({a.card}), fitted on {a.fit} ({when})")
        for row, i in enumerate(idx):
            t = float(cols[meas][row]) * 1e-3
            if not np.isfinite(t):
                continue
            r = m[i]
            launches = 2.0 if float(r[f"splits_{side}"]) > 1 else 1.0
            busy = t - launches * FLOOR_US[prof] * 1e-6
            src = f"MEAS: {os.path.basename(a.fit)} {when}, {shape_text(r)}: {meas} {t * 1e3:.4g} ms"
            if prof == "flex":  # visit-bound in both phases (its decode walks the whole block-mask row)
                # The roofline spreads visits over the SMs its CTAs fill: (sequence, KV head) x QShare
                # groups x 128-row tiles x KV splits, in rounds (visit_rounds).
                P, G = int(r["prefill_tokens"]), int(r["qshare_g"])
                rr = int(r["q_heads"]) // int(r["kv_heads"])
                ctas = (int(r["batch"]) * int(r["kv_heads"]) * -(-P // G) * -(-(G * rr) // 128) *
                        int(float(r["splits_cisa"])))
                # Prefill CTAs co-reside FLEX_CTAS_PER_SM per SM (its decoding kernel: one).
                per_sm = 1 if r["phase"] == "decode" else FLEX_CTAS_PER_SM
                rounds = visit_rounds(ctas, per_sm, FLEX_LONE_CTA)
                fill = ctas / (rounds * SMS)
                busy *= fill
                visits = float(r["page_visits_cisa"])
                cls = "decode" if r["phase"] == "decode" else f"m{int(float(r['tile_rows_cisa']))}"
                print(f"  page_visit_ns {cls}: {{value: {busy * SMS / visits * 1e9:.4g}, source: \"{src}; "
                      f"(time - floor) x {SMS} SMs x fill {fill:.3f} / {visits:.4g} page visits\"}}")
            elif r["phase"] == "decode":
                bytes_ = float(r[f"pred_dram_bytes_attention_{side}"])
                what = "gather_bw_tbs" if prof == "flex" else "read_bw_tbs"
                print(f"  {what}: {{value: {bytes_ / busy / 1e12:.4g}, source: \"{src}; the model's DRAM bytes / "
                      f"(time - {launches:.0f} floor)\"}}")
            else:
                flops = float(r[f"flops_attention_{side}"])
                print(f"  mma_tflops: {{value: {flops / busy / 1e12:.4g}, source: \"{src}; issued FLOPs "
                      f"{flops:.4g} / (time - floor)\"}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
