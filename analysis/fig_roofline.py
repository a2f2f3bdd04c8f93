"""Roofline: each kernel point (dense attention, CISA attention, CISA scoring) at its
arithmetic intensity (FLOPs ÷ DRAM bytes) against the card's bandwidth and BF16 MMA ceilings.

Bytes per kernel: K/V + Q/O + split-KV partials for attention (each column used when the file
has it), representatives for scoring. FLOPs: issued (with tile padding) for attention, useful
for scoring."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, NullFormatter

from cisa_h5 import PHASES, finite, sorted_unique
from fig_common import Catalogue, row_model_hw, series_colors, split_by, title

MAX_ROWS = 3000
KERNELS = (  # label, marker, byte columns (first required), FLOP column, time column
    ("dense attention", "o", ("bytes_kv_dense", "bytes_qo", "bytes_partials_dense"),
     "flops_attention_dense", "attention_dense"),
    ("CISA attention", "s", ("bytes_kv_cisa", "bytes_qo", "bytes_partials_cisa"),
     "flops_attention_cisa", "attention_cisa"),
    ("CISA scoring", "^", ("bytes_rep",), "flops_scoring", "scoring"),
)


def kernel_bytes(sub, cols):
    total = sub.f(cols[0]).copy()
    for c in cols[1:]:
        if c in sub:
            v = sub.f(c)
            total += np.where(np.isfinite(v), v, 0.0)
    return total


def render(result, cat: Catalogue) -> None:
    p = result.points
    if p is None:
        return  # planner-only file; report.py notes it once
    need = ["bytes_kv_dense", "bytes_kv_cisa", "flops_attention_dense", "flops_attention_cisa",
            "pred_ms_attention_dense", "pred_ms_attention_cisa"]
    if p.missing(*need):
        cat.note(f"Roofline skipped: columns missing: {', '.join(p.missing(*need))}.")
        return
    bw = result.attr_float("hw_read_bw_tbs")
    peak = result.attr_float("hw_bf16_tflops")
    if bw is None or peak is None:
        cat.note("Roofline: the file has no hardware peaks (attributes hw_read_bw_tbs, "
                 "hw_bf16_tflops); ceiling lines omitted, points drawn alone.")
    for (model, hw), sub in split_by(p, "model", "hardware"):
        model, hw = row_model_hw(result, sub) if not model else (model, hw or result.attr("hardware"))
        thinned = ""
        if len(sub) > MAX_ROWS:  # keep figures light: evenly spaced rows, measured ones kept
            meas = (finite(sub.f("meas_ms_attention_dense")) |
                    finite(sub.f("meas_ms_attention_cisa")) | finite(sub.f("meas_ms_scoring")))
            keep = np.zeros(len(sub), dtype=bool)
            keep[np.linspace(0, len(sub) - 1, MAX_ROWS).astype(int)] = True
            sub = sub.subset(keep | meas)
            thinned = f" {len(sub):,} of the rows drawn (evenly spaced; every measured row)."
        phases = sorted_unique(sub.text("phase", "all").tolist())
        phases = [ph for ph in PHASES if ph in phases] + [ph for ph in phases if ph not in PHASES]
        colors = dict(zip(phases, series_colors(len(phases))))
        fig, ax = plt.subplots(figsize=(7.5, 5))
        ai_all, perf_all = [], []
        measured = False
        drawn_kernels = []
        for name, marker, bcols, fcol, tcol in KERNELS:
            if bcols[0] not in sub or fcol not in sub:
                continue
            b, f = kernel_bytes(sub, bcols), sub.f(fcol)
            with np.errstate(divide="ignore", invalid="ignore"):
                ai = f / b
            for kind in ("pred", "meas"):
                t = sub.f(f"{kind}_ms_{tcol}")
                with np.errstate(divide="ignore", invalid="ignore"):
                    perf = f / (t * 1e-3) / 1e12  # TF/s
                ok = finite(ai) & finite(perf) & (ai > 0) & (perf > 0)
                if ok.any() and name not in drawn_kernels:
                    drawn_kernels.append(name)
                if kind == "meas" and ok.any():
                    measured = True
                for ph in phases:
                    m = ok & (sub.text("phase", "all") == ph)
                    if not m.any():
                        continue
                    ax.scatter(ai[m], perf[m], marker=marker, s=28 if kind == "pred" else 46,
                               facecolors=colors[ph] if kind == "pred" else "none",
                               edgecolors=colors[ph], linewidths=1.2, alpha=0.85)
                ai_all += list(ai[ok]); perf_all += list(perf[ok])
        if not ai_all:
            plt.close(fig)
            cat.note(f"Roofline for {model} on {hw} skipped: no finite points.")
            continue
        lo, hi = min(ai_all) / 4, max(ai_all) * 4
        if bw is not None and peak is not None:
            ridge = peak / bw  # FLOP/byte where TF/s = TB/s * AI
            lo, hi = min(lo, ridge / 8), max(hi, ridge * 8)
            xs = np.geomspace(lo, hi, 200)
            ax.plot(xs, np.minimum(bw * xs, peak), color="black", lw=1.5)
            ax.annotate(f"HBM read {bw:g} TB/s", (lo * 1.5, bw * lo * 1.5), fontsize=7,
                        textcoords="offset points", xytext=(6, -4))
            ax.annotate(f"BF16 MMA {peak:g} TF/s", (ridge * 1.2, peak), fontsize=7,
                        textcoords="offset points", xytext=(0, 4))
            att = result.attr_float("hw_attention_tflops")
            if att is not None and att < peak:
                xa = xs[bw * xs >= att]
                ax.plot(xa, np.full(len(xa), att), color="black", lw=1, ls="--")
                ax.annotate(f"attention kernel {att:g} TF/s", (hi / 1.5, att), fontsize=7,
                            ha="right", textcoords="offset points", xytext=(0, -10))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        top = max(max(perf_all), peak or 0) * 1.8
        bottom = min(min(perf_all), (bw * lo) if bw else np.inf) / 1.8
        ax.set_ylim(bottom, top)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("arithmetic intensity (FLOP / DRAM byte, log)")
        ax.set_ylabel("achieved throughput (TFLOP/s, log)")
        handles = [Line2D([], [], color=colors[ph], marker="o", linestyle="none", label=ph)
                   for ph in phases]
        handles += [Line2D([], [], color="gray", marker=mk, linestyle="none", label=nm)
                    for nm, mk, *_ in KERNELS if nm in drawn_kernels]
        handles.append(Line2D([], [], color="gray", marker="o", linestyle="none", label="predicted (filled)"))
        if measured:
            handles.append(Line2D([], [], color="gray", marker="o", mfc="none", linestyle="none",
                                  label="measured (open)"))
        else:
            handles.append(Line2D([], [], color="none", label="no measurements"))
        if bw is None or peak is None:
            handles.append(Line2D([], [], color="none", label="no hardware peaks in file"))
        else:
            handles.append(Line2D([], [], color="black", label="roofline (bandwidth, MMA)"))
        ax.legend(handles=handles, fontsize=7, loc="lower right", title="phase / kernel")
        what = "Roofline of the attention and scoring kernels" + ("" if measured else " (no measurements)")
        ax.set_title(title(result, what, model=model, hardware=hw))
        fig.tight_layout()
        cat.save(fig, f"roofline_{model}_{hw}", f"Roofline: {model} on {hw}",
                 "FLOPs ÷ DRAM bytes per layer per forward (attention: issued FLOPs over K/V + "
                 "Q/O + partials; scoring: useful FLOPs over representatives); throughput "
                 "from predicted (filled) and measured (open) times." + thinned)
