"""Ceiling view: the method's analytical per-query ceilings as a markdown table and charts
versus context and budget."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter

from cisa_h5 import fmt_tokens, format_value, sorted_unique
from series import spread
from fig_common import (Catalogue, log2_context_axis, log_y_if_wide, marker_for, series_colors,
                        title)

CEILINGS = (("ceiling_near_end_prefill", "near-end prefill"),
            ("ceiling_full_prefill", "full prefill"),
            ("ceiling_decode", "decode (G=1)"))
KEYS = ("budget_chunks", "qshare_g", "context_tokens", "chunk_tokens", "window_pages")


def ceiling_rows(points):
    """Distinct (K, G, L, c, W) rows with their ceilings (the ceiling view is model-free)."""
    keys = [k for k in KEYS if k in points]
    table = np.stack([np.asarray(points[k], dtype=np.int64) for k in keys], axis=1)
    uniq, first = np.unique(table, axis=0, return_index=True)
    rows = []
    for key, i in zip(uniq.tolist(), first.tolist()):
        row = dict(zip(keys, key))
        row["nominal_compression"] = float(points.f("nominal_compression")[i])
        for col, _ in CEILINGS:
            row[col] = float(points.f(col)[i])
        rows.append(row)
    return rows


def render(result, cat: Catalogue) -> None:
    p = result.points
    if p is None:
        return  # planner-only file; report.py notes it once
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
    # A chart shows at most 4 budgets and 4 G values (spread over the range); the table has all.
    if len(gs) > 4:
        keep_g = set(spread(gs, 4))
        rows_chart = [r for r in rows if r.get("qshare_g", 0) in keep_g]
        gs = sorted(keep_g)
    else:
        rows_chart = rows
    if len(budgets) > 4 and all(len({r["budget_chunks"] for r in rows_chart
                                     if r["context_tokens"] == L}) > 1 for L in contexts):
        keep_k = set(spread(budgets, 4))
        rows_chart = [r for r in rows_chart if r["budget_chunks"] in keep_k]
        budgets = sorted(keep_k)
    rows = rows_chart
    if len(contexts) > 1:
        chart_vs_context(result, cat, rows, budgets, gs, contexts)
    else:
        cat.note(f"Ceilings vs context not drawn: the file has one context "
                 f"(L = {fmt_tokens(contexts[0])}); see the ceiling table.")
    if len({r["budget_chunks"] for r in rows if r["context_tokens"] == contexts[-1]}) > 1:
        chart_vs_budget(result, cat, rows, budgets, gs, contexts)
    elif len(contexts) == 1 and len(gs) > 1:
        chart_vs_g(result, cat, rows, budgets[0], gs, contexts[0])


STYLES = ["-", "--", ":", "-."]


def chart_vs_context(result, cat, rows, budgets, gs, contexts):
    """One panel per ceiling, one line per (K, G)."""
    styles = STYLES
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=False)
    per_l = {}
    for r in rows:
        per_l.setdefault(r["context_tokens"], set()).add(r["budget_chunks"])
    # A budget schedule (one K per context, e.g. 1K@128K ... 4K@1M) is one line, K annotated.
    schedule = len(budgets) > 1 and all(len(v) == 1 for v in per_l.values())
    if schedule:
        budgets = ["schedule"]

    def has_k(r, k):
        return k == "schedule" or r["budget_chunks"] == k

    combos = [(k, g) for k in budgets for g in gs
              if any(has_k(r, k) and r.get("qshare_g", 0) == g for r in rows)]
    colors = dict(zip(budgets, series_colors(len(budgets))))
    for ax, (col, name) in zip(axes, CEILINGS):
        drawn = set()
        for k, g in combos:
            # decode is G=1 whatever the row's G: draw it once per budget
            gkey = "decode" if col == "ceiling_decode" else g
            if (k, gkey) in drawn:
                continue
            drawn.add((k, gkey))
            sel = sorted((r for r in rows if has_k(r, k) and r.get("qshare_g", 0) == g),
                         key=lambda r: r["context_tokens"])
            xs = [r["context_tokens"] for r in sel]
            ys = [r[col] for r in sel]
            if not np.isfinite(ys).any():
                continue
            kname = "K: schedule" if k == "schedule" else f"K={k:,}"
            label = kname if col == "ceiling_decode" else f"{kname}, G={g}"
            if k == "schedule" and (k, gkey) == sorted(drawn, key=str)[0]:
                for r in sel:
                    ax.annotate(f"K={r['budget_chunks']:,}", (r["context_tokens"], r[col]),
                                textcoords="offset points", xytext=(3, -10), fontsize=6)
            ax.plot(xs, ys, styles[gs.index(g) % len(styles)] if col != "ceiling_decode" else "-",
                    marker=marker_for(len(xs)), ms=3, color=colors[k], label=label)
        log2_context_axis(ax, contexts)
        logy = log_y_if_wide(ax)
        ax.set_xlabel("context L (tokens, log2)")
        ax.set_ylabel(f"ceiling (x, dense ÷ CISA bytes{', log2' if logy else ''})")
        ax.set_title(name)
        ax.legend(title="budget, QShare G", loc="upper left",
                  fontsize=7 if len(ax.get_lines()) > 6 else None)
    fig.suptitle(title(result, "CISA byte-reduction ceilings vs context (ceiling view)",
                       model="all models"))
    fig.tight_layout()
    cat.save(fig, "ceilings_vs_context", "Ceilings vs context",
             "Analytical ceilings per budget K and QShare G; decode uses G=1.")



def chart_vs_budget(result, cat, rows, budgets, gs, contexts):
    """Ceilings versus budget at the longest context."""
    styles = STYLES
    if True:
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


def chart_vs_g(result, cat, rows, K, gs, L):
    """One budget and one context: prefill ceilings versus QShare G (decode is G = 1)."""
    sel = sorted((r for r in rows if r["budget_chunks"] == K and r["context_tokens"] == L),
                 key=lambda r: r.get("qshare_g", 0))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    xs = [r["qshare_g"] for r in sel]
    for ci, (col, name) in enumerate(CEILINGS[:2]):
        ax.plot(xs, [r[col] for r in sel], STYLES[ci], marker="o", ms=3, label=name)
    ax.axhline(sel[0]["ceiling_decode"], color="black", ls="-.", lw=1, label="decode (G=1)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.minorticks_off()
    ax.set_xlabel("QShare G (positions per selection, log2)")
    ax.set_ylabel("ceiling (x, dense ÷ CISA bytes)")
    ax.legend(title=f"K = {K:,}, L = {fmt_tokens(L)}")
    ax.set_title(title(result, f"Ceilings vs QShare G at K = {K:,}, L = {fmt_tokens(L)}",
                       model="all models"))
    fig.tight_layout()
    cat.save(fig, "ceilings_vs_g", "Ceilings vs QShare G",
             "Analytical ceilings at the file's single budget and context.")
