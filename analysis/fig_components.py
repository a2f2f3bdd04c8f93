"""Stacked component bars (attention, scoring, top-k, setup, other), dense vs CISA, predicted
and measured, like a profiler breakdown."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.lines import Line2D

from cisa_h5 import COMPONENTS, finite, fmt_tokens, series_label
from fig_common import (COMPONENT_COLORS, Catalogue, row_model_hw, split_by, table_row_range,
                        title)
from series import title_note, dims_vs_x, readable_slice

MAX_CONFIGS = 12
# The dense run has core attention only; scoring, top-k, setup and other are CISA components
# (pred_ms_other etc. describe the CISA run). Whatever GPU busy holds beyond the drawn
# components is drawn as an explicit "rest of busy" segment.
DENSE_PARTS = {"attention": "attention_dense"}
REST = "rest of busy"
SHORT = {"scoring": "sc", "topk": "tk", "setup": "su", "other": "ot"}
CISA_PARTS = {"attention": "attention_cisa", "scoring": "scoring", "topk": "topk",
              "setup": "setup", "other": "other"}


def time_label(phase: str) -> str:
    if phase == "full_prefill":  # cisa-sim sums full prefill over the prompt's forwards
        return "time per layer, whole prompt (all forwards), whole batch (ms)"
    return "time per layer per forward, whole batch (ms)"


def _stack(sub, i, kind, parts):
    return {c: float(sub.f(f"{kind}_ms_{col}")[i]) for c, col in parts.items()}


def pick_rows(sub):
    """Rows to draw: all when few, else those at one context (at most MAX_CONFIGS): the
    context with the most measured rows, or the longest when nothing is measured."""
    idx = np.arange(len(sub))
    if len(idx) > 6 and "context_tokens" in sub:
        ctx = sub.f("context_tokens")
        meas = np.zeros(len(sub), dtype=bool)
        for c in ("attention_dense", "attention_cisa", "busy_dense", "busy_cisa"):
            meas |= finite(sub.f(f"meas_ms_{c}"))
        if meas.any():
            vals, counts = np.unique(ctx[meas], return_counts=True)
            target = vals[counts == counts.max()].max()
            idx = idx[(ctx == target) & meas]
        else:
            idx = idx[ctx == np.nanmax(ctx)]
    return idx[:MAX_CONFIGS], len(idx) > MAX_CONFIGS


def config_label(sub, i, dims):
    keys = [d for d in ("budget_chunks", "qshare_g") if d in sub] + \
        [d for d in dims if d not in ("budget_chunks", "qshare_g", "context_tokens")]
    lab = series_label(keys, [sub[k][i] for k in keys])
    if "context_tokens" in sub:
        lab += f", L={fmt_tokens(sub['context_tokens'][i])}"
    return lab


def components_table(result, cat):
    p = result.points
    cols = [c for c in ("model", "phase", "context_tokens", "budget_chunks", "qshare_g", "batch")
            if c in p]
    comps = ["attention_dense", "attention_cisa", "scoring", "topk", "setup", "other",
             "busy_dense", "busy_cisa"]
    head = cols + [f"{c} pred / meas (ms)" for c in comps]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows_range, more = table_row_range(len(p))
    for i in rows_range:
        cells = [fmt_tokens(p[c][i]) if c == "context_tokens" else str(p[c][i]) for c in cols]
        for c in comps:
            pr, me = p.f(f"pred_ms_{c}")[i], p.f(f"meas_ms_{c}")[i]
            cells.append((f"{pr:.4g}" if np.isfinite(pr) else "-") + " / " +
                         (f"{me:.4g}" if np.isfinite(me) else "-"))
        lines.append("| " + " | ".join(cells) + " |")
    cat.table("components", "Component times per layer per forward (predicted / measured)",
              "Times in ms per layer per forward for the whole batch (full_prefill: summed over "
              "the prompt's forwards); `-` = not measured. "
              "GPU busy is the union of kernel and memory-op intervals, so it can be less "
              "than the sum of the components.\n\n" + "\n".join(lines) + more)


def render(result, cat: Catalogue) -> None:
    p = result.points
    if p is None:
        return  # planner-only file; report.py notes it once
    need = ["pred_ms_attention_dense", "pred_ms_attention_cisa"]
    if p.missing(*need):
        cat.note(f"Component bars skipped: columns missing: {', '.join(p.missing(*need))}.")
        return
    components_table(result, cat)
    for (model, hw, phase), sub in split_by(p, "model", "hardware", "phase"):
        model, hw = row_model_hw(result, sub) if not model else (model, hw or result.attr("hardware"))
        sub, sliced = readable_slice(sub, "context_tokens", max_keep=4, max_series=MAX_CONFIGS)
        rows, truncated = pick_rows(sub)
        dims, _ = dims_vs_x(sub, "context_tokens", exclude=("model", "hardware", "phase"))
        measured = any(finite(sub.f(f"meas_ms_{c}")[rows]).any()
                       for c in ("attention_dense", "attention_cisa", "busy_dense", "busy_cisa"))
        kinds = ("pred", "meas") if measured else ("pred",)
        bars = []  # (label, stack dict, busy, hatch, is_group_start)
        for i in rows:
            lab = config_label(sub, i, dims)
            first = True
            row_measured = finite(np.array([sub.f(f"meas_ms_{c}")[i] for c in
                                            ("attention_dense", "attention_cisa", "busy_dense",
                                             "busy_cisa")])).any()
            for side, parts in (("dense", DENSE_PARTS), ("CISA", CISA_PARTS)):
                for kind in kinds:
                    if kind == "meas" and not row_measured:
                        continue
                    st = _stack(sub, i, kind, parts)
                    busy = float(sub.f(f"{kind}_ms_busy_{side.lower()}")[i])
                    drawn = sum(v for v in st.values() if np.isfinite(v) and v > 0)
                    if np.isfinite(busy) and busy > drawn * (1 + 1e-6) + 1e-9:
                        st[REST] = busy - drawn
                    word = "predicted" if kind == "pred" else "measured"
                    bars.append((f"{lab} · {side} · {word}", st, busy,
                                 "" if kind == "pred" else "//", first))
                    first = False
        n = len(bars)
        fig, (ax, axz) = plt.subplots(1, 2, figsize=(14, 1.4 + 0.32 * n), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2]})
        y = np.arange(n)[::-1].astype(float)
        for panel, only_cisa in ((ax, False), (axz, True)):
            for yi, (lab, st, busy, hatch, _) in zip(y, bars):
                if only_cisa and " · CISA · " not in lab:
                    continue
                left = 0.0
                for comp in COMPONENTS + (REST,):
                    v = st.get(comp, np.nan)
                    if not np.isfinite(v) or v <= 0:
                        continue
                    panel.barh(yi, v, left=left, color=COMPONENT_COLORS[comp], hatch=hatch,
                               edgecolor="white" if not hatch else "black", linewidth=0.4,
                               height=0.8)
                    left += v
                if np.isfinite(busy):
                    panel.plot([busy, busy], [yi - 0.45, yi + 0.45], color="black", lw=2)
                if only_cisa:  # profiler-style readout of the small components
                    parts = [f"{SHORT[c]} {st[c]:.3g}" for c in COMPONENTS[1:]
                             if c in st and np.isfinite(st[c])]
                    end = max(left, busy if np.isfinite(busy) else 0.0)
                    panel.annotate(" · ".join(parts) + " ms", (end, yi), fontsize=6,
                                   va="center", textcoords="offset points", xytext=(4, 0))
            if only_cisa:
                lo_x, hi_x = panel.get_xlim()
                panel.set_xlim(lo_x, hi_x * 1.7)
            for yi, b in zip(y, bars):
                if b[4] and yi != y[0]:
                    panel.axhline(yi + 0.5, color="gray", lw=0.6)
            panel.set_xlabel(time_label(phase))
            panel.grid(axis="y", visible=False)
        axz.set_title("CISA only (zoomed; sc scoring, tk top-k, su setup, ot other)")
        axz.tick_params(axis="y", left=False)
        ax.set_yticks(y)
        ax.set_yticklabels([b[0] for b in bars], fontsize=7)
        handles = [Patch(color=COMPONENT_COLORS[c], label=c) for c in COMPONENTS]
        if any(REST in b[1] for b in bars):
            handles.append(Patch(color=COMPONENT_COLORS[REST], label="rest of GPU busy "
                                 "(not in the components)"))
        handles.append(Line2D([], [], color="black", lw=2, label="GPU busy (union)"))
        if measured:
            handles.append(Patch(facecolor="white", edgecolor="black", hatch="//",
                                 label="measured"))
        else:
            handles.append(Patch(color="none", label="no measurements"))
        axz.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                   title=f"phase {phase}")
        what = f"Component breakdown, {phase}" + ("" if measured else " (no measurements)")
        ax.set_title("dense vs CISA")
        if sliced:
            what += "\n" + title_note(sliced)
        fig.suptitle(title(result, what, model=model, hardware=hw))
        fig.tight_layout()
        cap = ("Stacked per-component time, dense vs CISA (scoring, top-k, setup and other are "
               "CISA components); the black tick is GPU busy.")
        if sliced:
            cap += f" Shown at {'; '.join(sliced)}."
        if truncated:
            cap += f" Only the first {MAX_CONFIGS} configurations at one context are shown."
        cat.save(fig, f"components_{model}_{hw}_{phase}",
                 f"Component breakdown: {model}, {phase}", cap)
