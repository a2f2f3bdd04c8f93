"""Reading cisa-sim HDF5 result files.

Only the documented layout is used: string file attributes and groups of equal-length 1-D
columns (float64, int64 or UTF-8 strings), each with `unit` and `description` attributes.
Nothing here depends on matplotlib, so it can be reused by other tools.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import h5py
import numpy as np

# Axis (configuration) columns of /points, in the order used for labels and sorting.
AXES_TEXT = ("model", "hardware", "phase")
AXES_INT = ("context_tokens", "budget_chunks", "qshare_g", "batch", "q_heads", "kv_heads",
            "head_dim", "chunk_tokens", "window_pages", "prefill_tokens")
PHASES = ("terminal_prefill", "full_prefill", "decode", "mtp")
COMPONENTS = ("attention", "scoring", "topk", "setup", "other")

# Short names for legend labels ("K=4096, G=4").
AXIS_SHORT = {
    "budget_chunks": "K", "qshare_g": "G", "batch": "B", "q_heads": "Hq", "kv_heads": "Hkv",
    "head_dim": "d", "chunk_tokens": "c", "window_pages": "W", "prefill_tokens": "P",
    "context_tokens": "L", "model": "", "hardware": "", "phase": "",
}


class ReportInputError(Exception):
    """The input file is not a usable cisa-sim result (exit code 2)."""


def _to_str(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        if value.shape == ():
            return _to_str(value[()])
        return ", ".join(_to_str(v) for v in value.ravel())
    if isinstance(value, np.generic):
        return _to_str(value.item())
    return str(value)


@dataclass
class Group:
    """One HDF5 group as columns: name -> numpy array (strings become dtype=object of str)."""
    name: str
    columns: dict = field(default_factory=dict)
    units: dict = field(default_factory=dict)
    descriptions: dict = field(default_factory=dict)

    def __contains__(self, key: str) -> bool:
        return key in self.columns

    def __getitem__(self, key: str) -> np.ndarray:
        return self.columns[key]

    def __len__(self) -> int:
        for v in self.columns.values():
            return len(v)
        return 0

    def has(self, *names: str) -> bool:
        return all(n in self.columns for n in names)

    def missing(self, *names: str) -> list:
        return [n for n in names if n not in self.columns]

    def f(self, key: str) -> np.ndarray:
        """A numeric column as float64 (NaN-filled if absent)."""
        if key not in self.columns:
            return np.full(len(self), np.nan)
        return np.asarray(self.columns[key], dtype=np.float64)

    def text(self, key: str, default: str = "") -> np.ndarray:
        if key not in self.columns:
            return np.array([default] * len(self), dtype=object)
        return self.columns[key]

    def is_text(self, key: str) -> bool:
        return key in self.columns and self.columns[key].dtype == object

    def unit(self, key: str, default: str = "") -> str:
        return self.units.get(key, default) or default

    def subset(self, mask: np.ndarray) -> "Group":
        g = Group(self.name, {k: v[mask] for k, v in self.columns.items()},
                  dict(self.units), dict(self.descriptions))
        return g


@dataclass
class ResultFile:
    path: str
    attrs: dict
    groups: dict  # name -> Group

    @property
    def points(self):
        """The /points group, or None for a planner-only file (just /plan)."""
        return self.groups.get("points")

    def group(self, name: str):
        return self.groups.get(name)

    def attr(self, key: str, default: str = "") -> str:
        v = self.attrs.get(key)
        return default if v is None or v == "" else v

    def attr_float(self, key: str):
        """A numeric attribute stored as a string; None when absent or not a finite number."""
        v = self.attrs.get(key)
        if v is None:
            return None
        try:
            x = float(str(v).strip())
        except ValueError:
            return None
        return x if math.isfinite(x) and x > 0 else None


MAX_ROWS = 1 << 27  # as the C++ readers: above the 5e7-point sweep limit


def _read_dataset(ds: h5py.Dataset) -> np.ndarray:
    if ds.ndim != 1:
        raise ReportInputError(f"{ds.name}: expected a 1-D column, found shape {ds.shape}")
    if ds.shape[0] > MAX_ROWS:  # a corrupt or foreign header must not size our memory
        raise ReportInputError(f"{ds.name}: implausible length {ds.shape[0]}")
    kind = ds.dtype.kind
    if kind in ("O", "S", "U") or h5py.check_string_dtype(ds.dtype) is not None:
        if h5py.check_string_dtype(ds.dtype) is not None:
            raw = ds.asstr()[...]
        else:
            raw = ds[...]
        return np.array([_to_str(v) for v in raw], dtype=object)
    if kind in ("i", "u"):
        return ds[...].astype(np.int64)
    if kind in ("f",):
        return ds[...].astype(np.float64)
    if kind == "b":
        return ds[...].astype(np.int64)
    raise ReportInputError(f"{ds.name}: unsupported column type {ds.dtype}")


def read_group(h5: h5py.File, name: str) -> Group:
    g = h5[name]
    if not isinstance(g, h5py.Group):
        raise ReportInputError(f"/{name} is not a group")
    out = Group(name)
    length = None
    for key, ds in g.items():
        if not isinstance(ds, h5py.Dataset):
            continue
        try:
            arr = _read_dataset(ds)
        except ReportInputError:
            raise
        except (OSError, KeyError, ValueError, RuntimeError, TypeError) as e:  # corrupt data
            raise ReportInputError(f"/{name}/{key}: cannot read ({e})") from None
        if length is None:
            length = len(arr)
        elif len(arr) != length:
            raise ReportInputError(
                f"/{name}/{key}: length {len(arr)} differs from the group's {length}")
        out.columns[key] = arr
        out.units[key] = _to_str(ds.attrs.get("unit", ""))
        out.descriptions[key] = _to_str(ds.attrs.get("description", ""))
    return out


def load(path: str) -> ResultFile:
    """Reads every group of a cisa-sim HDF5 file. Raises ReportInputError on bad input."""
    try:
        h5 = h5py.File(path, "r")
    except FileNotFoundError:
        raise ReportInputError(f"{path}: no such file") from None
    except OSError as e:
        raise ReportInputError(f"{path}: not a readable HDF5 file ({e})") from None
    try:
        with h5:
            attrs = {k: _to_str(v) for k, v in h5.attrs.items()}
            groups = {}
            for name, obj in h5.items():
                if isinstance(obj, h5py.Group):
                    groups[name] = read_group(h5, name)
    except ReportInputError as e:
        raise ReportInputError(f"{path}: {e}") from None
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as e:  # corrupt metadata
        raise ReportInputError(f"{path}: corrupt or foreign HDF5 file ({e})") from None
    if "points" not in groups and "plan" not in groups and "designs" not in groups:
        raise ReportInputError(f"{path}: neither a /points nor a /plan group, nor /designs "
                               "(is this a cisa-sim result file?)")
    return ResultFile(path=path, attrs=attrs, groups=groups)


def unique_in_order(values) -> list:
    return list(dict.fromkeys(values))


def sorted_unique(values) -> list:
    vals = unique_in_order(list(values))
    try:
        return sorted(vals)
    except TypeError:
        return vals


def finite(a: np.ndarray) -> np.ndarray:
    return np.isfinite(np.asarray(a, dtype=np.float64))


def has_any_finite(group: Group, *names: str) -> bool:
    return any(name in group and finite(group[name]).any() for name in names)


def varying(group: Group, names, exclude=()) -> list:
    """Columns of `names` present in group that take more than one value."""
    out = []
    for n in names:
        if n in exclude or n not in group:
            continue
        if len(set(group[n].tolist())) > 1:
            out.append(n)
    return out


def format_value(v) -> str:
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "-"
        if float(v).is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}"
    return str(v)


def series_label(keys, values) -> str:
    parts = []
    for k, v in zip(keys, values):
        short = AXIS_SHORT.get(k, k)
        parts.append(f"{short}={format_value(v)}" if short else format_value(v))
    return ", ".join(parts)


def fmt_tokens(n) -> str:
    """1048576 -> '1M', 131072 -> '128K'."""
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)
