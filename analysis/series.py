"""Splitting rows into plotted series: which axis columns name a line and which follow x."""

from __future__ import annotations

import numpy as np

from cisa_h5 import (AXES_INT, AXES_TEXT, AXIS_SHORT, Group, format_value, series_label,
                     sorted_unique)

ALWAYS_NAMED = ("budget_chunks", "qshare_g")  # legends always name budget and G
# When a chart must fix a column, these values win over the most common one
# (the planner's batch_requested = 0 means "as many sequences as fit").
PREFERRED = {"batch_requested": 0}


EXTRA_FLOAT_INPUTS = ("selection_overlap",)
# Paired dense/CISA results (batch_dense, fits_cisa, reason_dense, ...) are outputs.
OUTPUT_SUFFIXES = ("_dense", "_cisa")
# Result columns, never configuration (some are int64, e.g. /plan's max_concurrency_*).
OUTPUT_PREFIXES = ("max_", "min_", "tokens_per_", "pred_", "meas_", "bytes_", "flops_",
                   "ceiling_", "l2_", "splits_", "selections", "sparse_", "dense_path_",
                   "eligible_", "kv_bytes", "kv_reduction", "capacity", "gpus", "throughput",
                   "err_", "point_index", "shard", "row_index", "fits_", "feasible_",
                   "pareto_", "reason_", "speedup", "mem_", "seq_bytes", "ttft", "tpot",
                   "decode_", "prefill_ms", "output_length_ratio", "hbm_bytes", "rep_bytes",
                   "ssm_bytes")


def config_columns(group: Group) -> list:
    """Columns that describe a configuration: the documented axes first, then any other text
    or integer column (e.g. rep_kind, score_agg, rep_dim) and known float inputs."""
    cols = [c for c in AXES_TEXT + AXES_INT if c in group]
    for name, arr in group.columns.items():
        if name in cols or name.startswith(OUTPUT_PREFIXES) or name.endswith(OUTPUT_SUFFIXES):
            continue
        if arr.dtype == object or arr.dtype.kind in "iu" or name in EXTRA_FLOAT_INPUTS:
            cols.append(name)
    return cols


def _varies_at_fixed(group: Group, col: str, fixed) -> bool:
    """True if `col` takes several values among rows that agree on every column of `fixed`."""
    keys = list(zip(*(group[c].tolist() for c in fixed))) if fixed else [()] * len(group)
    seen = {}
    for k, v in zip(keys, group[col].tolist()):
        if seen.setdefault(k, v) != v:
            return True
    return False


def modal_value(values):
    """Most frequent value; ties broken by the middle of the sorted tied values."""
    vals, counts = np.unique(np.asarray(values), return_counts=True)
    tied = vals[counts == counts.max()]
    return tied[(len(tied) - 1) // 2].item() if hasattr(tied[0], "item") else tied[(len(tied) - 1) // 2]


def spread(values, n: int) -> list:
    """At most n values spread over the sorted values (first and last included)."""
    vals = sorted(set(values))
    if len(vals) <= n:
        return vals
    idx = np.unique(np.round(np.linspace(0, len(vals) - 1, n)).astype(int))
    return [vals[i] for i in idx]


def n_series(group: Group, x: str, exclude=()) -> int:
    """How many lines iter_series would draw."""
    dims, _ = dims_vs_x(group, x, exclude=exclude)
    if not dims:
        return 1 if len(group) else 0
    return len(set(zip(*(group[d].tolist() for d in dims))))


NOTE_NAMES = {"weight_dtype": "weights", "batch_requested": "batch"}


def fixed_note(col: str, value, all_values) -> str:
    """Plain words for a column a chart fixes: "B = 16 (the file also has 8, 32)"."""
    if col == "batch_requested" and value == 0:
        return "batch as large as memory allows"
    name = NOTE_NAMES.get(col) or AXIS_SHORT.get(col) or col
    others = [format_value(v) for v in sorted(all_values) if v != value]
    also = f"the file also has {', '.join(others)}" if len(others) <= 4 else f"one of {len(all_values)} values"
    return f"{name} = {format_value(value)} ({also})"


def title_note(notes) -> str:
    """The line a figure title adds for the columns it fixed ("" when none)."""
    return ("shown at " + "; ".join(notes)) if notes else ""


def readable_slice(group: Group, x: str, keep=ALWAYS_NAMED, max_keep=4, max_series=16,
                   exclude=("model", "hardware", "phase")):
    """Restricts rows to what one chart can show. While there are more than `max_series`
    lines, the configuration column (other than x and `keep`) with the most values that varies
    independently of x and `keep` (e.g. batch, score_agg) is fixed at its most common value;
    then each `keep` column (budget, G) that varies at fixed x is thinned to `max_keep` spread
    values. Returns (sub-group, list of human-readable notes on what was fixed)."""
    notes = []
    sub = group
    base = [x] + [k for k in keep if k in sub]
    while n_series(sub, x, exclude) > max_series:
        candidates = []
        for col in config_columns(sub):
            if col in base or col in exclude or col not in sub:
                continue
            n_vals = len(set(sub[col].tolist()))
            if n_vals > 1 and _varies_at_fixed(sub, col, [c for c in base if c in sub]):
                candidates.append((-n_vals, col))
        if not candidates:
            break
        n_vals, col = min(candidates)  # most values first, then column order (stable)
        value = PREFERRED.get(col)
        if value is None or not np.any(sub[col] == value):
            value = modal_value(sub[col])
        all_values = set(sub[col].tolist())
        sub = sub.subset(sub[col] == value)
        notes.append(fixed_note(col, value, all_values))
    for col in keep:
        if col not in sub or col == x or n_series(sub, x, exclude) <= max_series:
            continue
        vals = set(sub[col].tolist())
        if len(vals) > max_keep and _varies_at_fixed(sub, col, [x] if x in sub else []):
            chosen = spread(vals, max_keep)
            sub = sub.subset(np.isin(sub[col], chosen))
            notes.append(f"{AXIS_SHORT.get(col, col)} = {', '.join(format_value(v) for v in chosen)} "
                         f"({len(vals)} values in the file)")
    return sub, notes


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
