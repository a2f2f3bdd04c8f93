"""Speedup (dense ÷ CISA) vs context: predicted lines, measured markers, per budget and G."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from cisa_h5 import finite, fmt_tokens, format_value
from fig_common import (STYLE_COLOR, Catalogue, dodge, log2_axis, log2_context_axis, log_y_if_wide,
                        row_model_hw, series_colors, series_style, split_by, table_row_range, title)
from series import title_note, iter_series, readable_slice

PANELS = (("attention", "core attention"), ("busy", "GPU busy"))
PHASE_CEILING = {"terminal_prefill": "ceiling_near_end_prefill",
                 "full_prefill": "ceiling_full_prefill",
                 "decode": "ceiling_decode", "mtp": "ceiling_near_end_prefill"}


X_CHOICES = (("context_tokens", "context L (tokens, log2)"),
             ("qshare_g", "QShare G (positions per selection, log2)"),
             ("budget_chunks", "budget K (chunks, log2)"),
             ("batch", "batch (sequences, log2)"))
X_NAMES = {"context_tokens": "context", "qshare_g": "QShare G", "budget_chunks": "budget",
           "batch": "batch"}


def choose_x(sub):
    """Context on x when it varies (the issue's figure); else the first swept of G, K, batch
    (a file at one context would otherwise give a column of dots)."""
    for col, label in X_CHOICES:
        if col in sub and len(set(sub[col].tolist())) > 1:
            return col, label
    return X_CHOICES[0]


def speedup_table(result, cat: Catalogue) -> None:
    p = result.points
    cols = [c for c in ("model", "hardware", "phase", "context_tokens", "budget_chunks",
                        "qshare_g", "batch") if c in p]
    vals = ["pred_speedup_attention", "pred_speedup_attention_vs_own", "meas_speedup_attention",
            "pred_speedup_busy", "pred_speedup_busy_vs_own", "meas_speedup_busy", "pred_basis"]
    vals = [v for v in vals if v in p]
    if not vals:
        return
    head = cols + vals
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows_range, more = table_row_range(len(p))
    for i in rows_range:
        cells = []
        for c in head:
            v = p[c][i]
            if c == "context_tokens":
                cells.append(fmt_tokens(v))
            elif isinstance(v, str):
                cells.append(v)
            elif c.startswith(("pred_speedup", "meas_speedup")):
                cells.append(f"{v:.2f}x" if np.isfinite(v) else "-")
            else:
                cells.append(format_value(v))
        lines.append("| " + " | ".join(cells) + " |")
    note = ("Speedups are dense ÷ CISA time (time view): `pred_speedup_*` against the best dense "
            "implementation of the card (`dense_impl`), `*_vs_own` against dense with this project's "
            "kernels, the twin of the measured `meas_speedup_*`. `-` = not measured.\n\n")
    cat.table("speedups", "Predicted and measured speedups", note + "\n".join(lines) + more)


def render(result, cat: Catalogue) -> None:
    p = result.points
    if p is None:
        return  # planner-only file; report.py notes it once
    need = ("context_tokens", "pred_speedup_attention", "pred_speedup_busy")
    if p.missing(*need):
        cat.note(f"Speedup figures skipped: columns missing: {', '.join(p.missing(*need))}.")
        return
    speedup_table(result, cat)
    for (model, hw, phase), sub in split_by(p, "model", "hardware", "phase"):
        model, hw = row_model_hw(result, sub) if not model else (model, hw or result.attr("hardware"))
        measured = any(finite(sub.f(f"meas_speedup_{k}")).any() for k, _ in PANELS)
        # Measured speedups use this project's kernels on both sides: their predicted twin is
        # pred_speedup_*_vs_own. Without measurements the lines are vs the best dense baseline.
        own = measured and all(f"pred_speedup_{k}_vs_own" in sub for k, _ in PANELS)
        pred_col = "pred_speedup_{}_vs_own" if own else "pred_speedup_{}"
        if own:
            baseline = "dense with this project's kernels (the measured twin)"
        elif "dense_impl" in sub:
            baseline = "dense = " + ", ".join(sorted(set(sub["dense_impl"].tolist())))
        else:
            baseline = ""
        xcol, xlabel = choose_x(sub)
        sub, sliced = readable_slice(sub, xcol)
        lines = list(iter_series(sub, xcol, exclude=("model", "hardware", "phase")))
        colors = series_colors(len(lines))
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
        ceil_col = PHASE_CEILING.get(phase)
        for ax, (key, name) in zip(axes, PANELS):
            for i, ((label, s, schedule), color) in enumerate(zip(lines, colors)):
                x0 = s.f(xcol)
                x = dodge(x0, i, len(lines))  # coinciding series stay visible side by side
                y = s.f(pred_col.format(key))
                ok = finite(y) & (x0 > 0)
                st = series_style(i)
                ax.plot(x[ok], y[ok], linestyle=st["linestyle"], marker=st["marker"] if ok.sum() <= 16 else "",
                        ms=4, color=color, label=label, zorder=3 + i * 0.01)
                for sd in schedule:  # annotate values that follow the context (a schedule)
                    for xi, yi, v in zip(x[ok], y[ok], s[sd][ok]):
                        ax.annotate(f"{'K' if sd == 'budget_chunks' else sd}={format_value(v)}",
                                    (xi, yi), textcoords="offset points", xytext=(3, -10),
                                    fontsize=6, color=color)
                m = s.f(f"meas_speedup_{key}")
                okm = finite(m) & (x0 > 0)
                if okm.any():
                    ax.plot(x[okm], m[okm], linestyle="none", marker="D", ms=7, mfc="none",
                            mew=1.5, color=color)
                if key == "attention" and ceil_col and ceil_col in s:
                    c = s.f(ceil_col)
                    okc = finite(c) & (x0 > 0)
                    ax.plot(x0[okc], c[okc], ":", color=color, lw=1, alpha=0.7)
            ax.axhline(1.0, color="black", lw=0.8, alpha=0.5)
            logy = log_y_if_wide(ax)
            if xcol == "context_tokens":
                log2_context_axis(ax, sub.f(xcol))
            else:
                log2_axis(ax, sub.f(xcol))
            ax.set_xlabel(xlabel)
            ax.set_ylabel(f"speedup, {name} (x, dense ÷ CISA{', log2' if logy else ''})")
            ax.set_title(name)
        handles, labels = axes[0].get_legend_handles_labels()
        extra = [Line2D([], [], color=STYLE_COLOR, marker="o", ms=4, label="predicted (lines)")]
        if measured:
            extra.append(Line2D([], [], color=STYLE_COLOR, linestyle="none", marker="D",
                                mfc="none", label="measured (open diamonds)"))
        else:
            extra.append(Line2D([], [], color="none", label="no measurements"))
        if ceil_col:
            extra.append(Line2D([], [], color=STYLE_COLOR, linestyle=":",
                                label=f"ceiling, left panel ({ceil_col.replace('ceiling_', '')})"))
        handles += extra
        fig.legend(handles, [h.get_label() for h in handles], loc="upper center",
                   bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(handles)),
                   title=f"phase {phase}: budget K, QShare G (x: {X_NAMES[xcol]})")
        what = f"Speedup vs {X_NAMES[xcol]}, {phase.replace('_', ' ')}"
        if xcol != "context_tokens" and "context_tokens" in sub:
            ctx = sorted(set(sub["context_tokens"].tolist()))
            what += f" at L = {', '.join(fmt_tokens(c) for c in ctx)}"
        what += "" if measured else " (no measurements)"
        if baseline:
            what += f"; {baseline}"
        if sliced:
            what += "\n" + title_note(sliced)
        fig.suptitle(title(result, what, model=model, hardware=hw))
        fig.tight_layout()
        cat.save(fig, f"speedup_{model}_{hw}_{phase}",
                 f"Speedup vs {X_NAMES[xcol]}: {model}, {phase}",
                 "Dense ÷ CISA for core attention and GPU busy; lines predicted, open diamonds "
                 "measured; series sharing a value sit a few per cent apart on x so none hides another" + ("" if measured else " (none in this file)") + "." +
                 (f" Shown at {'; '.join(sliced)} (speedups.md lists the rows)."
                  if sliced else ""))
