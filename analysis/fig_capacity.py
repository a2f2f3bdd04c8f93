"""Capacity plots from the planner's /plan group: max concurrency and throughput per GPU vs
context, dense vs CISA."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from cisa_h5 import finite, format_value
from fig_common import Catalogue, log2_context_axis, series_colors, split_by, title
from series import iter_series, readable_slice

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
    for (model, hw), sub in split_by(plan, "model", "hardware"):
        model = model or result.attr("model", "")
        hw = hw or result.attr("hardware", "")
        sub, sliced = readable_slice(sub, "context_tokens", exclude=("model", "hardware"))
        lines = list(iter_series(sub, "context_tokens", exclude=("model", "hardware")))
        colors = series_colors(len(lines))
        fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.4), squeeze=False)
        for ax, (key, name, unit) in zip(axes[0], panels):
            for (label, s, schedule), color in zip(lines, colors):
                x = s.f("context_tokens")
                for side, ls, mk in (("dense", "--", "o"), ("cisa", "-", "s")):
                    y = s.f(f"{key}_{side}")
                    ok = finite(y) & (x > 0) & (y > 0)  # 0 = does not fit
                    ax.plot(x[ok], y[ok], ls, marker=mk, ms=4, color=color)
                if schedule:
                    y = s.f(f"{key}_cisa")
                    for sd in schedule:
                        for xi, yi, v in zip(x, y, s[sd]):
                            if np.isfinite(yi):
                                ax.annotate(f"{'K' if sd == 'budget_chunks' else sd}="
                                            f"{format_value(v)}", (xi, yi), fontsize=6,
                                            textcoords="offset points", xytext=(3, 4),
                                            color=color)
            log2_context_axis(ax, sub.f("context_tokens"))
            ax.set_yscale("log")
            ax.set_xlabel("context L (tokens, log2)")
            ax.set_ylabel(f"{name} ({unit}, log)")
            ax.set_title(name)
            handles = [Line2D([], [], color=c, label=lab or "all") for (lab, *_), c in zip(lines, colors)]
            handles += [Line2D([], [], color="gray", ls="--", marker="o", label="dense"),
                        Line2D([], [], color="gray", ls="-", marker="s", label="CISA")]
            ax.legend(handles=handles, title="budget, QShare G / path")
        what = "Capacity vs context (planner)"
        if sliced:
            what += f"\nslice: {'; '.join(sliced)}"
        fig.suptitle(title(result, what, model=model, hardware=hw))
        fig.tight_layout()
        cat.save(fig, f"capacity_{model}_{hw}", f"Capacity: {model} on {hw}",
                 "Max concurrency and throughput per GPU vs context, dense vs CISA.")
