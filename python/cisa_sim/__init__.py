"""cisa_sim: cisa-sim results as pandas DataFrames.

    >>> import cisa_sim
    >>> df = cisa_sim.run("ultra_tp2_1m", cisa__budget=2048, sweep__G=[1, 4, 16])
    >>> df[["phase", "qshare_g", "pred_speedup_busy"]]
    >>> df.attrs["units"]["pred_ms_busy_cisa"]          # 'ms'
    >>> df.attrs["provenance"]["git_hash"]

load(path) reads /points (or /plan) of a result file: one column per dataset, strings decoded,
the table's column order kept; df.attrs holds "units" and "descriptions" (column -> text),
"provenance" (the file attributes as a dict: tool_version, git_hash, scenario_effective_yaml, ...)
and "group". run(scenario, **overrides) runs the cisa-sim binary and loads what it wrote.
Needs numpy, h5py and pandas (Debian: python3-numpy python3-h5py python3-pandas).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

import h5py
import numpy as np
import pandas as pd

__all__ = ["load", "run", "find_binary", "CisaSimError"]

_GROUPS = ("points", "plan")


class CisaSimError(RuntimeError):
    """cisa-sim exited with an error (the message is its stderr); exit_code 2 = bad input."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    if isinstance(value, np.generic):
        return _text(value.item())
    return str(value)


def load(path: str, group: str | None = None) -> pd.DataFrame:
    """The /points (or /plan) table of a cisa-sim HDF5 file as a DataFrame.

    group: "points" or "plan"; by default the one the file has (points first)."""
    with h5py.File(path, "r") as f:
        if group is None:
            group = next((g for g in _GROUPS if g in f), None)
            if group is None:
                raise ValueError(f"{path}: no /points or /plan group (not a cisa-sim result file)")
        elif group not in f:
            raise ValueError(f"{path}: no /{group} group (has: {', '.join(f.keys())})")
        g = f[group]
        columns, units, descriptions = {}, {}, {}
        for name in g:  # creation order: the table's column order
            ds = g[name]
            if ds.dtype.kind in ("S", "O", "U"):
                columns[name] = np.array([_text(v).rstrip("\x00") for v in ds[...]], dtype=object)
            else:
                columns[name] = ds[...]
            units[name] = _text(ds.attrs.get("unit", ""))
            descriptions[name] = _text(ds.attrs.get("description", ""))
        provenance = {k: _text(v) for k, v in f.attrs.items()}
    df = pd.DataFrame(columns)
    df.attrs["units"] = units
    df.attrs["descriptions"] = descriptions
    df.attrs["provenance"] = provenance
    df.attrs["group"] = group
    df.attrs["path"] = os.path.abspath(path)
    return df


def find_binary() -> str:
    """$CISA_SIM, else cisa-sim on PATH, else the repository's build/release/cisa-sim."""
    env = os.environ.get("CISA_SIM")
    if env:
        return env
    on_path = shutil.which("cisa-sim")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "release", "cisa-sim")
    if os.access(built, os.X_OK):
        return os.path.normpath(built)
    raise FileNotFoundError("cisa-sim not found: run scripts/quickstart.sh, put it on PATH or set CISA_SIM")


def _yaml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)  # JSON is YAML: [1, 4, 16], {"context": [...]}
    return str(value)


def run(scenario: str | None = None, *, plan: bool = False, binary: str | None = None, out: str | None = None,
        set: dict | None = None, **overrides) -> pd.DataFrame:
    """Runs cisa-sim on a scenario (a shipped name such as "ultra_tp2_1m" or a file) and returns
    load() of its output.

    Overrides become --set: keyword names use "__" for the dots (cisa__budget=2048 ->
    --set cisa.budget=2048, sweep__G=[1, 4]); `set={"workload.context": "512K"}` takes dotted keys
    as they are. plan=True runs `cisa-sim plan` (group /plan). out: keep the HDF5 file there
    (default: a temporary file, removed after loading)."""
    args = [binary or find_binary()]
    if plan:
        args.append("plan")
    if scenario:
        args += ["--scenario", scenario]
    sets = dict(set or {})
    sets.update({k.replace("__", "."): v for k, v in overrides.items()})
    for key, value in sets.items():
        args += ["--set", f"{key}={_yaml_value(value)}"]
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="cisa_sim_")
        out = os.path.join(tmp.name, "result.h5")
    try:
        proc = subprocess.run(args + ["--out", out, "--format", "none"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise CisaSimError(proc.stderr.strip() or f"cisa-sim exited with {proc.returncode}", proc.returncode)
        return load(out, "plan" if plan else "points")
    finally:
        if tmp is not None:
            tmp.cleanup()
