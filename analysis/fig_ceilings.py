"""Ceiling view: the method's analytical per-query ceilings as a markdown table and charts
versus context and budget."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from cisa_h5 import fmt_tokens, format_value, sorted_unique
from fig_common import Catalogue, log2_context_axis, series_colors, title

CEILINGS = (("ceiling_near_end_prefill", "near-end prefill"),
            ("ceiling_full_prefill", "full prefill"),
            ("ceiling_decode", "decode (G=1)"))
KEYS = ("budget_chunks", "qshare_g", "context_tokens", "chunk_tokens", "window_pages")


def ceiling_rows(points):
    """Distinct (K, G, L, c, W) rows with their ceilings (the ceiling view is model-free)."""
    keys = [k for k in KEYS if k in points]
    out = {}
    for i in range(len(points)):
        key = tuple(int(points[k][i]) for k in keys)
        if key in out:
            continue
        row = dict(zip(keys, key))
        row["nominal_compression"] = float(points.f("nominal_compression")[i])
        for col, _ in CEILINGS:
            row[col] = float(points.f(col)[i])
        out[key] = row
    return [out[k] for k in sorted(out)]


def render(result, cat: Catalogue) -> None:
    p = result.points
    need = [c for c, _ in CEILINGS] + ["budget_chunks", "context_tokens"]
    if p.missing(*need):
        cat.note(f"Ceiling table and charts skipped: columns missing: {', '.join(p.missing(*need))}.")
        return
    rows = ceiling_rows(p)
    if not rows:
        return

    # Markdown table.
    head = ["K (chunks)", "L (tokens)", "G", "nominal", "near-end prefill", "full prefill",
            "decode (G=1)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            f"{r['budget_chunks']:,}", fmt_tokens(r["context_tokens"]),
            str(r.get("qshare_g", "-")),
            f"{format_value(r['nominal_compression'])}x",
            *(f"{r[c]:.2f}x" if np.isfinite(r[c]) else "-" for c, _ in CEILINGS)]) + " |")
    c_tok = sorted_unique(r.get("chunk_tokens") for r in rows)
    w_pg = sorted_unique(r.get("window_pages") for r in rows)
    md = ("Ideal per-query ceilings (dense ÷ CISA bytes, ceiling view: window, tail and "
          "metadata ignored; method §3). "
          f"Chunk c = {', '.join(map(str, c_tok))} tokens; window W = "
          f"{', '.join(map(str, w_pg))} pages (not part of the ceiling formula).\n\n"
          + "\n".join(lines))
    cat.table("ceilings", "Ceiling table (near-end prefill, full prefill, decode)", md)

    # Chart versus context: one panel per ceiling, one line per (K, G).
    budgets = sorted_unique(r["budget_chunks"] for r in rows)
    gs = sorted_unique(r.get("qshare_g", 0) for r in rows)
    contexts = sorted_unique(r["context_tokens"] for r in rows)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=False)
    combos = [(k, g) for k in budgets for g in gs
              if any(r["budget_chunks"] == k and r.get("qshare_g", 0) == g for r in rows)]
    colors = dict(zip(budgets, series_colors(len(budgets))))
    styles = ["-", "--", ":", "-."]
    for ax, (col, name) in zip(axes, CEILINGS):
        drawn = set()
        for k, g in combos:
            # decode is G=1 whatever the row's G: draw it once per budget
            gkey = "decode" if col == "ceiling_decode" else g
            if (k, gkey) in drawn:
                continue
            drawn.add((k, gkey))
            sel = sorted((r for r in rows if r["budget_chunks"] == k and r.get("qshare_g", 0) == g),
                         key=lambda r: r["context_tokens"])
            xs = [r["context_tokens"] for r in sel]
            ys = [r[col] for r in sel]
            if not np.isfinite(ys).any():
                continue
            label = f"K={k:,}" if col == "ceiling_decode" else f"K={k:,}, G={g}"
            ax.plot(xs, ys, styles[gs.index(g) % len(styles)] if col != "ceiling_decode" else "-",
                    marker="o", ms=3, color=colors[k], label=label)
        log2_context_axis(ax, contexts)
        ax.set_xlabel("context L (tokens, log2)")
        ax.set_ylabel("ceiling (x, dense ÷ CISA bytes)")
        ax.set_title(name)
        ax.legend(title="budget, QShare G", loc="upper left")
    fig.suptitle(title(result, "CISA byte-reduction ceilings vs context (ceiling view)",
                       model="all models"))
    fig.tight_layout()
    cat.save(fig, "ceilings_vs_context", "Ceilings vs context",
             "Analytical ceilings per budget K and QShare G; decode uses G=1.")

    # Chart versus budget at the longest context.
    if len(budgets) > 1:
        L = contexts[-1]
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        for gi, g in enumerate(gs):
            sel = sorted((r for r in rows if r["context_tokens"] == L and r.get("qshare_g", 0) == g),
                         key=lambda r: r["budget_chunks"])
            if not sel:
                continue
            for ci, (col, name) in enumerate(CEILINGS[:2]):
                if g == 1 and col == "ceiling_near_end_prefill":
                    continue  # identical to the decode line
                ax.plot([r["budget_chunks"] for r in sel], [r[col] for r in sel],
                        styles[ci], marker="o", ms=3, color=series_colors(len(gs) + 1)[gi],
                        label=f"{name}, G={g}")
        sel = sorted((r for r in rows if r["context_tokens"] == L),
                     key=lambda r: r["budget_chunks"])
        seen = {}
        for r in sel:
            seen.setdefault(r["budget_chunks"], r["ceiling_decode"])
        ax.plot(list(seen), list(seen.values()), "-.", marker="s", ms=3, color="black",
                label="decode (G=1)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets)
        ax.set_xticklabels([f"{b:,}" for b in budgets])
        ax.minorticks_off()
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("budget K (chunks, log2)")
        ax.set_ylabel("ceiling (x, log2)")
        ax.legend(title="view, QShare G")
        ax.set_title(title(result, f"Ceilings vs budget at L = {fmt_tokens(L)} tokens",
                           model="all models"))
        fig.tight_layout()
        cat.save(fig, "ceilings_vs_budget", f"Ceilings vs budget (L = {fmt_tokens(L)})",
                 "Analytical ceilings at the longest context in the file.")
