"""Splitting rows into plotted series: which axis columns name a line and which follow x."""

from __future__ import annotations

import numpy as np

from cisa_h5 import AXES_INT, AXES_TEXT, AXIS_SHORT, Group, series_label, sorted_unique

ALWAYS_NAMED = ("budget_chunks", "qshare_g")  # legends always name budget and G


EXTRA_FLOAT_INPUTS = ("selection_overlap",)


def config_columns(group: Group) -> list:
    """Columns that describe a configuration: the documented axes first, then any other text
    or integer column (e.g. rep_kind, score_agg, rep_dim) and known float inputs."""
    cols = [c for c in AXES_TEXT + AXES_INT if c in group]
    for name, arr in group.columns.items():
        if name in cols:
            continue
        if arr.dtype == object or arr.dtype.kind in "iu" or name in EXTRA_FLOAT_INPUTS:
            cols.append(name)
    return cols


def dims_vs_x(group: Group, x: str, candidates=None, exclude=()):
    """Returns (series_dims, schedule_dims): candidate columns that vary at a fixed x value
    (they name separate lines) and those that vary only together with x (a schedule, e.g.
    the budget schedule 1K@128K ... 4K@1M: one line, values annotated)."""
    if candidates is None:
        candidates = config_columns(group)
    series, schedule = [], []
    xs = group[x].tolist() if x in group else [None] * len(group)
    for col in candidates:
        if col == x or col in exclude or col not in group:
            continue
        vals = group[col].tolist()
        if len(set(vals)) <= 1:
            continue
        per_x = {}
        for xv, v in zip(xs, vals):
            per_x.setdefault(xv, set()).add(v)
        if any(len(s) > 1 for s in per_x.values()):
            series.append(col)
        else:
            schedule.append(col)
    return series, schedule


def iter_series(group: Group, x: str, exclude=()):
    """Yields (label, sub-group sorted by x, schedule_dims) per line."""
    series, schedule = dims_vs_x(group, x, exclude=exclude)
    named = list(series)
    # Name budget and G in the legend even when constant; "K: schedule" when they follow x.
    label_dims = [d for d in ALWAYS_NAMED if d in group and d not in exclude and d != x] + \
        [d for d in series if d not in ALWAYS_NAMED]
    if not named:
        combos = [()]
    else:
        combos = sorted_unique(zip(*(group[d].tolist() for d in named)))
    for combo in combos:
        mask = np.ones(len(group), dtype=bool)
        for d, v in zip(named, combo):
            mask &= group[d] == v
        sub = group.subset(mask)
        if x in sub:
            order = np.argsort(np.asarray(sub[x], dtype=np.float64), kind="stable")
            sub = sub.subset(order)
        parts = []
        for d in label_dims:
            if d in schedule:
                parts.append(f"{AXIS_SHORT.get(d, d) or d}: schedule")
            elif len(sub):
                parts.append(series_label([d], [sub[d][0]]))
        yield ", ".join(parts), sub, schedule
