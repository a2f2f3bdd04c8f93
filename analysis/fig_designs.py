"""Sparse-attention designs (cisa-sim designs, group /designs): bytes per category and time per
component per design at the largest context, and the closed-form ceiling versus context."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from cisa_h5 import fmt_tokens
from fig_common import COMPONENT_COLORS, Catalogue

BYTES = (("bytes_kv_selected", "selected K/V"), ("bytes_kv_fixed", "fixed K/V (window, sink, tail)"),
         ("bytes_branch", "compressed branch"), ("bytes_index_read", "index read"),
         ("bytes_index_write", "index write"), ("bytes_scores", "scores"), ("bytes_ids", "IDs, tables"),
         ("bytes_qo", "Q/O"), ("bytes_partials", "split-KV partials"), ("bytes_other", "projection"))
TIMES = (("pred_ms_attention", "attention"), ("pred_ms_scoring", "scoring"), ("pred_ms_topk", "topk"),
         ("pred_ms_setup", "setup"), ("pred_ms_other", "other"))


def _slices(g):
    """(run, phase, budget) slices, in file order."""
    keys = list(zip(g.text("run"), g.text("phase"), g.f("budget_tokens").astype(np.int64)))
    seen = []
    for k in keys:
        if k not in seen:
            seen.append(k)
    return keys, seen


def _clip(ax, totals, dense, unit):
    """Linear axis up to 1.3x the dense line or the second-largest bar; taller bars are cut and
    labelled with their value (stacked categories stay readable)."""
    tall = sorted(totals)[-2] if len(totals) > 1 else totals[0]
    top = 1.3 * max(dense, tall)
    ax.set_ylim(0, top)
    for i, t in enumerate(totals):
        if t > top:
            ax.text(i, 0.97 * top, f"{t:.3g} {unit}", ha="center", va="top", fontsize=7, rotation=90,
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8})


def _bars(cat, g, mask, designs, run, phase, budget, L):
    fig, (ax_b, ax_t) = plt.subplots(1, 2, figsize=(12, 4.2))
    x = np.arange(len(designs))
    rows = [np.flatnonzero(mask & (g.text("design") == d))[0] for d in designs]
    bottom = np.zeros(len(designs))
    colors = plt.get_cmap("tab10")
    for i, (col, name) in enumerate(BYTES):
        if col not in g:
            continue
        v = g.f(col)[rows] / 1e9
        ax_b.bar(x, v, bottom=bottom, color=colors(i), label=name)
        bottom += v
    dense = g.f("bytes_dense_total")[rows][0] / 1e9
    ax_b.axhline(dense, color="k", ls="--", lw=1, label=f"dense ({dense:.3g} GB)")
    _clip(ax_b, bottom, dense, "GB")
    ax_b.set_ylabel("DRAM bytes (GB)")
    ax_b.set_title("bytes per category")
    bottom = np.zeros(len(designs))
    for col, name in TIMES:
        v = g.f(col)[rows]
        ax_t.bar(x, v, bottom=bottom, color=COMPONENT_COLORS.get(name, "#777777"), label=name)
        bottom += v
    lo, hi = g.f("pred_ms_busy_lo")[rows], g.f("pred_ms_busy_hi")[rows]
    mid = g.f("pred_ms_busy")[rows]
    ax_t.errorbar(x, mid, yerr=[mid - lo, hi - mid], fmt="none", ecolor="k", capsize=3, lw=1)
    dms = g.f("pred_ms_dense")[rows][0]
    ax_t.axhline(dms, color="k", ls="--", lw=1, label=f"dense attention ({dms:.3g} ms)")
    _clip(ax_t, np.maximum(bottom, hi), dms, "ms")
    ax_t.set_ylabel("time (ms)")
    ax_t.set_title("time per component (busy band: lo-hi)")
    for ax in (ax_b, ax_t):
        ax.set_xticks(x)
        ax.set_xticklabels(designs, rotation=20)
        ax.legend(fontsize=6, loc="upper right")
    r = int(g.f("heads_per_group")[rows][0])
    fig.suptitle(f"{run}: {phase}, L = {fmt_tokens(L)}, r = {r}, {budget:,} selected tokens per plan")
    fig.tight_layout()
    stem = f"designs_{run}_{phase}_{budget}"
    cat.save(fig, stem, f"Designs: {run}, {phase}, {budget:,} tokens",
             "Time view, one layer, whole batch. Bytes per category and time per component with the "
             "busy band; dashed: the dense baseline; bars taller than the axis are cut and labelled.")


def _ceilings(cat, g, designs):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for ax, phase in zip(axes, ("terminal_prefill", "decode")):
        ph = g.text("phase") == phase
        runs = list(dict.fromkeys(g.text("run")[ph].tolist()))
        budgets = sorted(set(g.f("budget_tokens")[ph].astype(np.int64).tolist()))
        if not runs:
            continue
        run, budget = runs[0], budgets[-1]
        m = ph & (g.text("run") == run) & (g.f("budget_tokens") == budget)
        for i, d in enumerate(designs):
            md = m & (g.text("design") == d)
            L = g.f("context_tokens")[md]
            order = np.argsort(L)
            ax.plot(L[order], g.f("ceiling_fixed")[md][order], marker="o", ms=3, label=d,
                    color=plt.get_cmap("tab10")(i))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context L (tokens, log2)")
        ax.set_title(f"{phase}: {run}, {budget:,} tokens")
        ax.legend(fontsize=7)
    axes[0].set_ylabel("ceiling: dense / design bytes per position (x, log)")
    fig.tight_layout()
    cat.save(fig, "designs_ceiling_vs_context", "Design ceilings versus context",
             "Closed form per position (README, Sparse-attention designs) with the fixed parts; "
             "per-head plans (Quest) counted disjoint.")


def render(result, cat: Catalogue) -> None:
    g = result.group("designs")
    if g is None:
        return
    need = ["design", "run", "phase", "budget_tokens", "context_tokens", "ceiling_fixed", "pred_ms_busy"]
    if g.missing(*need):
        cat.note(f"Design figures skipped: /designs lacks {', '.join(g.missing(*need))}.")
        return
    designs = list(dict.fromkeys(g.text("design").tolist()))
    L = g.f("context_tokens")
    top = L == np.max(L)
    keys, slices = _slices(g)
    keys = np.array([f"{a}|{b}|{c}" for a, b, c in keys])
    for run, phase, budget in slices:
        mask = top & (keys == f"{run}|{phase}|{budget}")
        if mask.any():
            _bars(cat, g, mask, designs, run, phase, int(budget), int(np.max(L)))
    _ceilings(cat, g, designs)
