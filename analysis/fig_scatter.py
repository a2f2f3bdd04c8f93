"""Predicted vs measured times, one point per (row, component), with the ±10% band."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from cisa_h5 import finite
from fig_common import COMPONENT_COLORS, Catalogue, date_of

SERIES = (("attention_dense", "attention", "o"), ("attention_cisa", "attention", "s"),
          ("scoring", "scoring", "o"), ("topk", "topk", "o"), ("setup", "setup", "o"),
          ("other", "other", "o"), ("busy_dense", "busy", "o"), ("busy_cisa", "busy", "s"))
BAND = 0.10


def render(result, cat: Catalogue) -> None:
    p = result.points
    pairs = []
    for col, comp, marker in SERIES:
        pr, me = p.f(f"pred_ms_{col}"), p.f(f"meas_ms_{col}")
        ok = finite(pr) & finite(me) & (pr > 0) & (me > 0)
        if ok.any():
            pairs.append((col, comp, marker, pr[ok], me[ok]))
    if not pairs:
        cat.note("Predicted-vs-measured scatter skipped: nothing is measured in this file "
                 "(every meas_ms_* column is NaN).")
        return
    # Summary table.
    lines = ["| component | points | within ±10% | median meas ÷ pred | worst meas ÷ pred |",
             "|---|---|---|---|---|"]
    total = inside_total = 0
    for col, _, _, pr, me in pairs:
        ratio = me / pr
        inside = int(np.sum(np.abs(ratio - 1) <= BAND))
        worst = ratio[np.argmax(np.abs(np.log(ratio)))]
        total += len(ratio)
        inside_total += inside
        lines.append(f"| {col} | {len(ratio)} | {inside} ({100 * inside / len(ratio):.0f}%) | "
                     f"{np.median(ratio):.3f} | {worst:.3f} |")
    cat.table("pred_vs_meas", "Predicted vs measured times",
              "Ratio of measured to predicted time per component (ms per layer per forward).\n\n"
              + "\n".join(lines))

    fig, ax = plt.subplots(figsize=(6.5, 6))
    allv = np.concatenate([np.concatenate([pr, me]) for *_, pr, me in pairs])
    lo, hi = allv.min() / 1.5, allv.max() * 1.5
    xs = np.geomspace(lo, hi, 50)
    ax.fill_between(xs, xs * (1 - BAND), xs * (1 + BAND), color="gray", alpha=0.25,
                    label="±10% band")
    ax.plot(xs, xs, color="black", lw=0.8, label="predicted = measured")
    for col, comp, marker, pr, me in pairs:
        ax.scatter(me, pr, marker=marker, s=26, color=COMPONENT_COLORS[comp],
                   edgecolors="black", linewidths=0.3, label=col.replace("_", " "), alpha=0.85)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured time (ms, log)")
    ax.set_ylabel("predicted time (ms, log)")
    ax.legend(fontsize=7, loc="upper left", title="component")
    models = sorted(set(p.text("model", result.attr("model")).tolist()))
    hws = sorted(set(p.text("hardware", result.attr("hardware")).tolist()))
    ax.set_title(f"Predicted vs measured: {inside_total}/{total} within ±10%\n"
                 f"{', '.join(models)} · {', '.join(hws)} · {date_of(result)}")
    fig.tight_layout()
    cat.save(fig, "pred_vs_meas", "Predicted vs measured",
             "Each point is one component of one configuration; the band is ±10%.")
