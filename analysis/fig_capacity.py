"""Capacity plots from the planner's /plan group: max concurrency and throughput per GPU vs
context, dense vs CISA."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from cisa_h5 import finite, format_value
from fig_common import (STYLE_COLOR, Catalogue, dodge, log2_context_axis, plain_log_ticks,
                        series_colors, series_style, split_by, title)
from series import title_note, iter_series, readable_slice

MAX_LINES = 8
PANELS = (("max_concurrency", "max concurrent sequences", "sequences"),
          ("tokens_per_s_per_gpu", "throughput per GPU", "tokens/s"))


def render(result, cat: Catalogue) -> None:
    plan = result.group("plan")
    if plan is None:
        cat.note("Capacity plots skipped: the file has no /plan group (run the planner).")
        return
    if "context_tokens" not in plan:
        cat.note("Capacity plots skipped: /plan has no context_tokens column.")
        return
    panels = [pn for pn in PANELS if plan.has(f"{pn[0]}_dense", f"{pn[0]}_cisa")]
    if not panels:
        cat.note("Capacity plots skipped: /plan has neither max_concurrency_* nor "
                 "tokens_per_s_per_gpu_* columns.")
        return
    for (model, hw), full in split_by(plan, "model", "hardware"):
        model = model or result.attr("model", "") or result.attr("deploy_model", "")
        hw = hw or result.attr("hardware", "")
        render_slice(result, cat, full, panels, model, hw)
        if len(full) > len(set(full["context_tokens"].tolist())):
            render_best(result, cat, full, panels, model, hw)


def render_slice(result, cat, sub, panels, model, hw):
    """One line per remaining configuration after slicing; dense dashed, CISA solid."""
    sub, sliced = readable_slice(sub, "context_tokens", exclude=("model", "hardware"),
                                 max_series=MAX_LINES)
    lines = list(iter_series(sub, "context_tokens", exclude=("model", "hardware")))
    colors = series_colors(len(lines))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.4), squeeze=False)
    for ax, (key, name, unit) in zip(axes[0], panels):
        labelled = False
        for i, ((label, s, schedule), color) in enumerate(zip(lines, colors)):
            x0 = s.f("context_tokens")
            x = dodge(x0, i, len(lines))  # coinciding lines (dense does not depend on K, G) stay visible
            for side, ls in (("dense", "--"), ("cisa", "-")):
                y = s.f(f"{key}_{side}")
                ok = finite(y) & (x0 > 0) & (y > 0)  # 0 = does not fit
                ax.plot(x[ok], y[ok], ls, marker=series_style(i)["marker"], ms=4, color=color,
                        mfc="none" if side == "dense" else color)
            y = s.f(f"{key}_cisa")
            if schedule and not labelled and np.any(finite(y) & (y > 0)):
                labelled = True  # schedule values (e.g. K per context): label one line
                for sd in schedule:
                    for xi, yi, v in zip(x, y, s[sd]):
                        if np.isfinite(yi) and yi > 0:
                            ax.annotate(f"{'K' if sd == 'budget_chunks' else sd}="
                                        f"{format_value(v)}", (xi, yi), fontsize=6,
                                        textcoords="offset points", xytext=(3, 4),
                                        color=color)
        log2_context_axis(ax, sub.f("context_tokens"))
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlabel("context L (tokens, log2)")
        ax.set_ylabel(f"{name} ({unit}, log)")
        ax.set_title(name)
    def fits(s):
        return any(np.any(finite(s.f(f"{k}_{side}")) & (s.f(f"{k}_{side}") > 0))
                   for k, *_ in panels for side in ("dense", "cisa"))

    # Only the series drawn; configurations that fit nowhere are named in the caption.
    handles = [Line2D([], [], color=c, marker=series_style(i)["marker"], ms=4, label=lab or "all")
               for i, ((lab, s, _), c) in enumerate(zip(lines, colors)) if fits(s)]
    nowhere = [lab or "all" for lab, s, _ in lines if not fits(s)]
    handles += [Line2D([], [], color=STYLE_COLOR, ls="--", marker="o", mfc="none", label="dense"),
                Line2D([], [], color=STYLE_COLOR, ls="-", marker="o", label="CISA")]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(4, len(handles)), title="budget K, QShare G / path")
    what = "Capacity vs context (planner)"
    if sliced:
        what += "\n" + title_note(sliced)
    fig.suptitle(title(result, what, model=model, hardware=hw))
    fig.tight_layout()
    cap = ("Max concurrency and throughput per GPU vs context, dense (dashed, open markers) vs CISA (solid); "
           "series sit a few per cent apart on x so coinciding lines stay visible.")
    if nowhere:
        cap += f" Not drawn (fit nowhere): {'; '.join(nowhere)}."
    if sliced:
        cap += f" Shown at {'; '.join(sliced)}."
    cat.save(fig, f"capacity_{model}_{hw}", f"Capacity: {model} on {hw}", cap)


def render_best(result, cat, sub, panels, model, hw):
    """The envelope of the sweep: at each context, the best value over every configuration
    (feasible ones when the planner says which), dense vs CISA."""
    ctx = sub.f("context_tokens")
    xs = np.array(sorted(set(ctx[np.isfinite(ctx) & (ctx > 0)].tolist())))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.4), squeeze=False)
    for ax, (key, name, unit) in zip(axes[0], panels):
        best = {}
        for side, ls, mk, color in (("dense", "--", "o", "#555555"), ("cisa", "-", "s", "#1f77b4")):
            y = sub.f(f"{key}_{side}")
            ok = finite(y) & (y > 0)
            if f"feasible_{side}" in sub:
                ok &= sub.f(f"feasible_{side}") > 0
            vals = np.array([np.max(y[ok & (ctx == L)]) if np.any(ok & (ctx == L)) else np.nan
                             for L in xs])
            best[side] = vals
            good = np.isfinite(vals)
            ax.plot(xs[good], vals[good], ls, marker=mk, ms=5, color=color,
                    label="dense" if side == "dense" else "CISA")
        for L, d, c in zip(xs, best["dense"], best["cisa"]):
            if np.isfinite(d) and np.isfinite(c) and d > 0:
                ax.annotate(f"{c / d:.2f}x", (L, c), fontsize=7, textcoords="offset points",
                            xytext=(0, 6), ha="center")
        log2_context_axis(ax, xs)
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlabel("context L (tokens, log2)")
        ax.set_ylabel(f"best {name} ({unit}, log)")
        ax.set_title(f"best {name} (label: CISA ÷ dense)")
        ax.legend(title="path")
    feas = " feasible" if any(f"feasible_{s}" in sub for s in ("dense", "cisa")) else ""
    fig.suptitle(title(result, f"Best over the sweep's{feas} configurations (planner)",
                       model=model, hardware=hw))
    fig.tight_layout()
    cat.save(fig, f"capacity_best_{model}_{hw}", f"Best capacity: {model} on {hw}",
             f"At each context the best value over every{feas} configuration of the sweep "
             "(each side picks its own configuration), dense vs CISA.")
