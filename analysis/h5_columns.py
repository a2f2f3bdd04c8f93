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


def add_columns(path: str, columns: dict, attrs: dict | None = None, group: str = "points") -> None:
    """Adds or replaces float64 columns {name: (values, unit, description)} in /<group> and
    string file attributes `attrs`, atomically (copy, modify, fsync, rename)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".h5", dir=d)
    os.close(fd)
    try:
        shutil.copyfile(path, tmp)
        with h5py.File(tmp, "r+") as f:
            if group not in f:
                raise ValueError(f"{path}: no /{group} group")
            g = f[group]
            n = None
            for ds in g.values():
                n = ds.shape[0]
                break
            for name, (values, unit, description) in columns.items():
                v = np.asarray(values, dtype=np.float64)
                if n is not None and v.shape != (n,):
                    raise ValueError(f"column {name}: {v.shape[0]} values for {n} rows")
                if name in g:
                    del g[name]
                ds = g.create_dataset(name, data=v)
                _put_text_attr(ds, "unit", unit)
                _put_text_attr(ds, "description", description)
            for k, v in (attrs or {}).items():
                _put_text_attr(f, k, v)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
