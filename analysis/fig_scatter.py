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
MAX_POINTS = 5000  # per component


def render(result, cat: Catalogue) -> None:
    p = result.points
    if p is None:
        return  # planner-only file; report.py notes it once
    pairs = []
    for col, comp, marker in SERIES:
        pr, me = p.f(f"pred_ms_{col}"), p.f(f"meas_ms_{col}")
        ok = finite(pr) & finite(me) & (pr > 0) & (me > 0)
        if ok.any():
            pairs.append((col, comp, marker, pr[ok][:MAX_POINTS], me[ok][:MAX_POINTS]))
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

    fig, (ax, axr) = plt.subplots(1, 2, figsize=(12, 5.6))
    allv = np.concatenate([np.concatenate([pr, me]) for *_, pr, me in pairs])
    lo, hi = allv.min() / 1.5, allv.max() * 1.5
    xs = np.geomspace(lo, hi, 50)
    ax.fill_between(xs, xs * (1 - BAND), xs * (1 + BAND), color="gray", alpha=0.25,
                    label="±10% band")
    ax.plot(xs, xs, color="black", lw=0.8, label="predicted = measured")
    axr.axhspan(1 - BAND, 1 + BAND, color="gray", alpha=0.25)
    axr.axhline(1.0, color="black", lw=0.8)
    for col, comp, marker, pr, me in pairs:
        kw = dict(marker=marker, s=26, color=COMPONENT_COLORS[comp], edgecolors="black",
                  linewidths=0.3, alpha=0.85)
        ax.scatter(me, pr, label=col.replace("_", " "), **kw)
        axr.scatter(pr, me / pr, **kw)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured time (ms, log)")
    ax.set_ylabel("predicted time (ms, log)")
    ax.set_title("predicted vs measured")
    ax.legend(fontsize=7, loc="upper left", title="component")
    axr.set_xscale("log")
    axr.set_xlim(lo, hi)
    ratios = np.concatenate([me / pr for *_, pr, me in pairs])
    span = max(0.25, float(np.max(np.abs(ratios - 1))) * 1.15)
    axr.set_ylim(max(0.0, 1 - span), 1 + span)
    axr.set_xlabel("predicted time (ms, log)")
    axr.set_ylabel("measured ÷ predicted (x)")
    axr.set_title("ratio (band: ±10%)")
    measured_rows = np.zeros(len(p), dtype=bool)
    for col, *_ in SERIES:
        measured_rows |= finite(p.f(f"meas_ms_{col}"))
    models = sorted(set(p.text("model", result.attr("model"))[measured_rows].tolist()))
    hws = sorted(set(p.text("hardware", result.attr("hardware"))[measured_rows].tolist()))
    fig.suptitle(f"Predicted vs measured times: {inside_total}/{total} within ±10%\n"
                 f"{', '.join(models)} · {', '.join(hws)} · {date_of(result)}")
    fig.tight_layout()
    cat.save(fig, "pred_vs_meas", "Predicted vs measured",
             "Each point is one component of one configuration; the band is ±10%.")
