"""Attaching measured columns to an existing cisa-sim HDF5 result file, atomically.

Tools that measure outside the C++ binary (the cuDNN peer through PyTorch, Nsight Compute byte
counts) add their columns to the /points group of a file cisa-sim wrote. The file keeps cisa-sim's
layout: 1-D float64 columns with `unit` and `description` attributes, string file attributes.
The change is made on a copy in the same directory and renamed over the original, so a crash
never leaves a half-written file.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import h5py
import numpy as np


def read_points(path: str) -> dict:
    """The /points columns of a result file as numpy arrays (strings decoded)."""
    out = {}
    with h5py.File(path, "r") as f:
        if "points" not in f:
            raise ValueError(f"{path}: no /points group (not a cisa-sim scenario result)")
        g = f["points"]
        for name, ds in g.items():
            if h5py.check_string_dtype(ds.dtype) is not None:
                out[name] = np.array(ds.asstr()[...], dtype=object)
            else:
                out[name] = ds[...]
    return out


def _put_text_attr(obj, key: str, value: str) -> None:
    """Fixed-length UTF-8 string attribute, as cisa-sim writes them (its C++ readers expect it)."""
    b = str(value).encode("utf-8")
    if key in obj.attrs:
        del obj.attrs[key]
    obj.attrs.create(key, np.array(b, dtype=h5py.string_dtype("utf-8", max(1, len(b)))))


def _copy_attrs(src, dst, skip=()) -> None:
    """The attributes of src onto dst with their own types (fixed-length strings stay so)."""
    for k in src.attrs:
        if k not in skip:
            dst.attrs.create(k, src.attrs[k], dtype=src.attrs.get_id(k).dtype)


def add_columns(path: str, columns: dict, attrs: dict | None = None, group: str = "points") -> None:
    """Adds or replaces float64 columns {name: (values, unit, description)} in /<group> and
    string file attributes `attrs`, atomically (a new file, fsync, rename).

    The new file is written whole (the other groups and datasets copied object by object, the file
    attributes with their own types) rather than edited in place: deleting and re-creating
    attributes in place trips an HDF5 1.10 metadata-cache failure ("Pinned entry count not
    decreasing") on some files, a segfault at close."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".h5", dir=d)
    os.close(fd)
    attrs = attrs or {}
    try:
        with h5py.File(path, "r") as src, h5py.File(tmp, "w", libver="latest") as dst:
            if group not in src:
                raise ValueError(f"{path}: no /{group} group")
            g_src = src[group]
            n = None
            for ds in g_src.values():
                n = ds.shape[0]
                break
            values = {}
            for name, (v, unit, description) in columns.items():
                v = np.asarray(v, dtype=np.float64)
                if n is not None and v.shape != (n,):
                    raise ValueError(f"column {name}: {v.shape[0]} values for {n} rows")
                values[name] = (v, unit, description)
            for name, obj in src.items():
                if name != group:
                    src.copy(obj, dst, name=name)
            g = dst.create_group(group)
            _copy_attrs(g_src, g)
            for name, ds in g_src.items():
                if name not in values:
                    src.copy(ds, g, name=name)
            for name, (v, unit, description) in values.items():
                ds = g.create_dataset(name, data=v)
                _put_text_attr(ds, "unit", unit)
                _put_text_attr(ds, "description", description)
            _copy_attrs(src, dst, skip=attrs)
            for k, v in attrs.items():
                _put_text_attr(dst, k, v)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
