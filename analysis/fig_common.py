"""Shared plotting helpers: backend, style, titles, saving PNG + SVG, the report's catalogue."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")  # headless; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from cisa_h5 import PHASES, ResultFile, Group  # noqa: E402

PHASE_ORDER = {ph: i for i, ph in enumerate(PHASES)}

plt.rcParams.update({
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8,
    "svg.fonttype": "none",     # text stays text: smaller SVGs
    "svg.hashsalt": "cisa-sim",  # reproducible SVG ids
})

COMPONENT_COLORS = {
    "attention": "#1f77b4",
    "scoring": "#ff7f0e",
    "topk": "#2ca02c",
    "setup": "#9467bd",
    "other": "#8c8c8c",
    "busy": "#d62728",
    "rest of busy": "#d9d9d9",
}


@dataclass
class Figure:
    stem: str
    title: str
    caption: str
    files: list


@dataclass
class Table:
    stem: str
    title: str
    markdown: str
    file: str


@dataclass
class Catalogue:
    """Everything the report produced, in order, plus notes on what was skipped and why."""
    out_dir: str
    figures: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    formats: tuple = ("png", "svg")
    compact_png: bool = False  # 256-colour PNGs (about 3x smaller) for committed figures

    def save(self, fig, stem: str, title: str, caption: str = "") -> None:
        stem = safe_name(stem)
        files = []
        bbox = None
        for fmt in self.formats:
            name = f"{stem}.{fmt}"
            meta = {"Date": None} if fmt == "svg" else {"Software": None}
            if bbox is None:  # compute the tight box once, reuse it for the other formats
                fig.canvas.draw()
                bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.1)
            path = os.path.join(self.out_dir, name)
            fig.savefig(path, format=fmt, metadata=meta, bbox_inches=bbox)
            if fmt == "png" and self.compact_png:
                quantize_png(path)
            files.append(name)
        plt.close(fig)
        self.figures.append(Figure(stem, title, caption, files))

    def table(self, stem: str, title: str, markdown: str) -> None:
        markdown = cap_table(markdown)
        stem = safe_name(stem)
        name = f"{stem}.md"
        with open(os.path.join(self.out_dir, name), "w", encoding="utf-8") as fh:
            fh.write(f"# {title}\n\n{markdown}\n")
        self.tables.append(Table(stem, title, markdown, name))

    def note(self, text: str) -> None:
        self.notes.append(text)


def quantize_png(path: str) -> None:
    """Rewrites a PNG with a 256-colour palette (Pillow ships with matplotlib); leaves it as is
    when Pillow is unavailable."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    method = getattr(getattr(Image, "Quantize", Image), "MEDIANCUT", 0)
    dither = getattr(getattr(Image, "Dither", Image), "NONE", 0)
    rgb.quantize(colors=256, method=method, dither=dither).save(path, format="PNG",
                                                                 optimize=True)


MAX_TABLE_ROWS = 400


def table_row_range(n: int, max_rows: int = MAX_TABLE_ROWS):
    """Rows to format for a markdown table, and the note to append when some are left out."""
    if n <= max_rows:
        return range(n), ""
    return range(max_rows), (f"\n({n - max_rows:,} more rows left out; `cisa-sim --format csv` "
                             "or the HDF5 file has them all)")


def cap_table(markdown: str, max_rows: int = MAX_TABLE_ROWS) -> str:
    """Keeps the first max_rows rows of each markdown table and says how many were left out
    (million-row sweeps would otherwise give unreadable, huge files)."""
    out, rows, dropped = [], 0, 0
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        is_row = line.startswith("|")
        if is_row and not line.startswith("|---") and i > 0 and lines[i - 1].startswith("|"):
            rows += 1
            if rows > max_rows:
                dropped += 1
                continue
        elif not is_row:
            if dropped:
                out.append(f"\n({dropped:,} more rows left out; `cisa-sim --format csv` or the "
                           "HDF5 file has them all)")
            rows = dropped = 0
        out.append(line)
    if dropped:
        out.append(f"\n({dropped:,} more rows left out; `cisa-sim --format csv` or the HDF5 "
                   "file has them all)")
    return "\n".join(out)


def safe_name(s: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(s)).strip("_")
    return s or "unnamed"


def date_of(result: ResultFile) -> str:
    created = result.attr("created_utc")
    return created[:10] if created else "undated"


def title(result: ResultFile, what: str, model: str = "", hardware: str = "") -> str:
    model = model or result.attr("model", "")
    hardware = hardware or result.attr("hardware", "")
    parts = [p for p in (model, hardware, date_of(result)) if p]
    return f"{what}\n{' · '.join(parts)}"


def split_by(group: Group, *keys: str):
    """Yields (values tuple, sub-group) for each distinct combination of the text/int keys that
    exist in the group, in sorted order. Missing keys yield ''."""
    present = [k for k in keys if k in group]
    if not present:
        yield tuple("" for _ in keys), group
        return
    combos = sorted(set(zip(*(group[k].tolist() for k in present))),
                    key=lambda combo: tuple((PHASE_ORDER.get(v, len(PHASE_ORDER)), str(v))
                                            if isinstance(v, str) else (0, v) for v in combo))
    for combo in combos:
        mask = np.ones(len(group), dtype=bool)
        for k, v in zip(present, combo):
            mask &= group[k] == v
        vals = iter(combo)
        yield tuple(next(vals) if k in present else "" for k in keys), group.subset(mask)


def row_model_hw(result: ResultFile, sub: Group):
    model = sub["model"][0] if "model" in sub and len(sub) else result.attr("model", "")
    hw = sub["hardware"][0] if "hardware" in sub and len(sub) else result.attr("hardware", "")
    return str(model), str(hw)


# Legend swatches for line styles (predicted, measured, ceiling) are black; series never are, and
# never grey either (tab10's grey 7, tab20's greys 14 and 15 are skipped).
STYLE_COLOR = "black"
SERIES_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">")
SERIES_LINESTYLES = ("-", "--", "-.", (0, (1, 1)), (0, (5, 1, 1, 1)))


def series_colors(n: int):
    cmap = plt.get_cmap("tab10" if n <= 9 else "tab20")
    greys = {7} if cmap.N == 10 else {14, 15}
    palette = [cmap(i) for i in range(cmap.N) if i not in greys]
    return [palette[i % len(palette)] for i in range(n)]


def series_style(i: int) -> dict:
    """Marker and line style of the i-th series, so that coinciding lines stay visible."""
    return {"marker": SERIES_MARKERS[i % len(SERIES_MARKERS)],
            "linestyle": SERIES_LINESTYLES[i % len(SERIES_LINESTYLES)]}


def dodge(x, i: int, n: int, width: float = 0.2):
    """x shifted by a small factor per series (log axes) so markers at one x do not cover each other."""
    if n <= 1:
        return x
    return x * 2 ** (width * (i - (n - 1) / 2) / max(n - 1, 1))


def log2_axis(ax, values, fmt=None) -> None:
    """Log2 x axis with a tick at each given value (thinned to at most 12)."""
    ax.set_xscale("log", base=2)
    fmt = fmt or (lambda v: f"{int(v):,}")
    ticks = sorted(set(int(c) for c in values if np.isfinite(c) and c > 0))
    if ticks:
        if len(ticks) > 12:
            step = int(np.ceil(len(ticks) / 12))
            ticks = ticks[::step]
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt(t) for t in ticks])
        ax.minorticks_off()
        if len(ticks) == 1:
            ax.set_xlim(ticks[0] / 2, ticks[0] * 2)


def log2_context_axis(ax, contexts) -> None:
    """Log2 x axis with tick labels like 128K, 1M: at the context lengths when they are few
    powers of two, else at the powers of two in range."""
    from cisa_h5 import fmt_tokens
    vals = sorted(set(int(c) for c in contexts if np.isfinite(c) and c > 0))
    pow2 = all(v & (v - 1) == 0 for v in vals)
    if vals and (len(vals) > 12 or not pow2):
        lo = int(np.floor(np.log2(vals[0])))
        hi = int(np.ceil(np.log2(vals[-1])))
        vals = [1 << e for e in range(lo, hi + 1)]
        step = int(np.ceil(len(vals) / 12))
        vals = vals[::step]
        log2_axis(ax, vals, fmt_tokens)
        ax.set_xlim(min(contexts) / 1.15, max(contexts) * 1.15)
        return
    log2_axis(ax, vals, fmt_tokens)


def log_y_if_wide(ax) -> bool:
    """Log2 y axis when the drawn values span more than 8x (speedups below and above 1)."""
    ys = np.concatenate([np.asarray(l.get_ydata(), dtype=float) for l in ax.get_lines()] or [[]])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    if len(ys) and ys.max() / ys.min() > 8:
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        return True
    return False


def marker_for(n_points: int) -> str:
    """Markers on short lines only: dense sweeps read better as plain lines."""
    return "o" if n_points <= 16 else ""


def plain_log_ticks(ax) -> None:
    """Plain numbers (300, 1000, 2e+04) instead of 3x10^2 on a log y axis, with enough labels:
    every 1-9 x 10^k within a decade or two, 1/2/5 over wider ranges. Call after plotting."""
    from matplotlib.ticker import LogLocator, NullFormatter
    lo, hi = ax.get_ylim()
    span = hi / lo if lo > 0 else np.inf
    subs = tuple(float(s) for s in range(1, 10)) if span < 12 else (1.0, 2.0, 3.0, 5.0) if span < 60 else \
        (1.0, 2.0, 5.0) if span < 2000 else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
