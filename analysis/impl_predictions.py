#!/usr/bin/env python3
"""Adds, to a measured result file, the model's prediction for each implementation that was measured.

    impl_predictions.py RESULT.h5 --binary BIN --scenario S [--set KEY=VALUE]... [--dry-run]

This project's kernels are compared with the file's own pred_* columns. The peers measured beside
them on the same card (analysis/measure_peers.py: meas_ms_attention_dense_peer = cuDNN;
analysis/measure_impls.py: meas_ms_attention_dense_cudnn, meas_ms_attention_dense_fa2,
meas_ms_attention_cisa_flex) are compared with the prediction of their own profile: the scenario is
evaluated again with implementation.dense=<profile> (or implementation.cisa=flex), and

    pred_ms_attention_dense_<p> (+ _lo, _hi)   pred_ms_attention_cisa_flex (+ _lo, _hi)
    err_attention_dense_<p>, err_attention_dense_peer, err_attention_cisa_flex

are added (atomically, analysis/h5_columns.add_columns), matched by point_index. Like with like: each
error divides a measurement by its own implementation's prediction. Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    from h5_columns import add_columns, read_points
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"impl_predictions.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

DENSE = ("cudnn", "fa2")
CISA = ("flex",)


class InputError(Exception):
    pass


def predictions(binary, scenario, sets, key, profile, column):
    cmd = [binary, "--scenario", scenario, "--no-hdf5", "--format", "csv"]
    for s in sets:
        cmd += ["--set", s]
    cmd += ["--set", f"implementation.{key}={profile}"]  # last: the implementation predicted wins
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise InputError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    out = {}
    for r in rows:
        out[int(r["point_index"])] = (tuple(float(r[column + s]) for s in ("", "_lo", "_hi")),
                                      tuple(r[a] for a in AXES))
    return out


AXES = ("phase", "context_tokens", "budget_chunks", "qshare_g", "batch", "q_heads", "kv_heads", "head_dim",
        "prefill_tokens")


def axes_of(cols, row):
    return tuple(str(cols[a][row]) for a in AXES)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("result")
    ap.add_argument("--binary", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--set", action="append", default=[], help="overrides the run was evaluated with")
    a = ap.parse_args(argv)
    try:
        if not os.path.exists(a.result):
            raise InputError(f"{a.result}: no such file")
        try:
            cols = read_points(a.result)
        except (OSError, ValueError) as e:
            raise InputError(f"{a.result}: not a readable result file ({e})") from e
        if "point_index" not in cols:
            raise InputError(f"{a.result}: /points has no column 'point_index'")
        idx = [int(i) for i in cols["point_index"]]
        new = {}
        wanted = [("dense", p, "pred_ms_attention_dense", f"meas_ms_attention_dense_{p}") for p in DENSE]
        wanted += [("cisa", p, "pred_ms_attention_cisa", f"meas_ms_attention_cisa_{p}") for p in CISA]
        for key, prof, column, meas in wanted:
            needed = meas in cols or (prof == "cudnn" and "meas_ms_attention_dense_peer" in cols)
            if not needed:
                continue
            pred = predictions(a.binary, a.scenario, a.set, key, prof, column)
            for row, i in enumerate(idx):
                if i not in pred or tuple(str(int(float(x))) if x.replace(".", "").isdigit() else x
                                          for x in pred[i][1]) != axes_of(cols, row):
                    raise InputError(f"{a.result}: point {i} is not the same point in scenario {a.scenario} "
                                     f"(axes {', '.join(AXES)})")
            name = f"{column}_{prof}"
            for j, suffix in enumerate(("", "_lo", "_hi")):
                new[name + suffix] = (np.array([pred[i][0][j] for i in idx]), "ms",
                                      f"{column}{suffix} predicted with implementation.{key}={prof}")
            p = new[name][0]
            with np.errstate(divide="ignore", invalid="ignore"):
                if meas in cols:
                    new[f"err_{column[8:]}_{prof}"] = (np.asarray(cols[meas], float) / p - 1.0, "fraction",
                                                       f"{meas} / {name} - 1 (the model's error on {prof})")
                if prof == "cudnn" and "meas_ms_attention_dense_peer" in cols:
                    new["err_attention_dense_peer"] = (np.asarray(cols["meas_ms_attention_dense_peer"], float) / p - 1.0,
                                                       "fraction", f"meas_ms_attention_dense_peer / {name} - 1")
        if not new:
            print(f"{a.result}: no peer measurement to compare")
            return 0
        add_columns(a.result, new, {"impl_predictions": f"analysis/impl_predictions.py --scenario {a.scenario}"})
        print(f"{a.result}: added {', '.join(sorted(new))}")
    except InputError as e:
        sys.stderr.write(f"impl_predictions.py: error: {e}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
