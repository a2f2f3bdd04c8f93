#!/usr/bin/env python3
"""CISA attention time at measured prefill points under each schedule of shared selected pages.

    schedule_states.py MEASURED.h5 [...] [--binary build/release/cisa-sim] [--card h100_sxm]
                       [--profile models/impl/cisa_kernels.yaml] [--markdown]

For every prefill point with meas_ms_attention_cisa, the scenario recorded in the file
(scenario_effective_yaml, priced for --card) is evaluated three times: with the profile as shipped,
and with its `l2_sharing.schedule` set to staggered and to convoy at every tile class (temporary
copies of --profile, same name, so its calibrations still apply). Prints, per point: tile rows,
the measured time, each prediction's error (measured / predicted - 1), and the two DRAM / visit
ratios (the staggered and the convoy estimate's DRAM time over the launch's page-visit time, at the
profile's gather rate and visit cost of the point's card). Then the median and worst |error| per
tile class. NOTES "Session 26". Exit codes: 0 ok, 2 bad input.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:  # pragma: no cover
    sys.stderr.write(f"schedule_states.py: Python module missing for {sys.executable}: {e}\n")
    sys.exit(2)

SCHEDULE = re.compile(r"schedule: \{m16: \w+, m32: \w+, m64: \w+, m128: \w+,")
SMS = 132


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def variant(profile_text, state):
    out, n = SCHEDULE.subn(f"schedule: {{m16: {state}, m32: {state}, m64: {state}, m128: {state},", profile_text)
    if n != 1:
        raise SystemExit("schedule_states.py: error: the profile has no single `schedule: {m16: ...}` line")
    return out


def evaluate(binary, yaml_text, card, profile_path):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as t:
        t.write(yaml_text)
    cmd = [binary, "--scenario", t.name, "--set", f"hardware={card}", "--no-hdf5", "--format", "csv"]
    if profile_path:
        cmd += ["--set", f"implementation.cisa={profile_path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    os.unlink(t.name)
    if proc.returncode != 0:
        raise SystemExit(f"schedule_states.py: error: {' '.join(cmd)}: {proc.stderr.strip()[:300]}")
    rows = csv.DictReader(io.StringIO("\n".join(l for l in proc.stdout.splitlines() if l.count(",") > 10)))
    return {int(r["point_index"]): r for r in rows}


def card_figures(binary, card):
    """Gather rate (B/s) and visit cost per tile class (s) of cisa_kernels on the card."""
    proc = subprocess.run([binary, "profiles", "--show", "cisa_kernels", "--gpu", card], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"schedule_states.py: error: profiles --show: {proc.stderr.strip()[:300]}")
    gather = re.search(r"attention\.gather_bw_tbs\s+([0-9.]+)", proc.stdout)
    visits = {m: re.search(rf"attention\.page_visit_ns\.m{m}\s+([0-9.]+)", proc.stdout) for m in (16, 32, 64, 128)}
    if not gather or not all(visits.values()):
        return None, None
    return float(gather.group(1)) * 1e12, {m: float(v.group(1)) * 1e-9 for m, v in visits.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--binary", default="build/release/cisa-sim")
    ap.add_argument("--card", default="h100_sxm")
    ap.add_argument("--profile", default="models/impl/cisa_kernels.yaml")
    a = ap.parse_args(argv)
    for f in a.files + [a.profile, a.binary]:
        if not os.path.exists(f):
            sys.stderr.write(f"schedule_states.py: error: {f}: no such file\n")
            return 2
    base = open(a.profile).read()
    paths = {}
    for state in ("staggered", "convoy"):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as t:
            t.write(variant(base, state))
        paths[state] = t.name
    gather, visit = card_figures(a.binary, a.card)
    print("| file | point | tile rows | measured ms | shipped | staggered | convoy | DRAM / visit, staggered | convoy |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs = {}
    try:
        for fn in a.files:
            with h5py.File(fn, "r") as f:
                g = f["points"]
                y = text(f.attrs["scenario_effective_yaml"])
                meas = g["meas_ms_attention_cisa"][...]
                idx = [int(i) for i in g["point_index"][...]]
                phase = [text(p) for p in g["phase"][...]]
            got = {k: evaluate(a.binary, y, a.card, p) for k, p in (("shipped", None), *paths.items())}
            for row, i in enumerate(idx):
                if phase[row] == "decode" or not np.isfinite(meas[row]):
                    continue
                m = int(float(got["shipped"][i]["tile_rows_cisa"]))
                e = {k: meas[row] / float(v[i]["pred_ms_attention_cisa"]) - 1 for k, v in got.items()}
                for k, v in e.items():
                    errs.setdefault((m, k), []).append(v)
                ratio = ["", ""]
                if gather:
                    t_visit = float(got["shipped"][i]["page_visits_cisa"]) * visit[m] / SMS
                    ratio = [f"{float(got[k][i]['pred_dram_bytes_attention_cisa']) / gather / t_visit:.2f}"
                             for k in ("staggered", "convoy")]
                print(f"| {os.path.basename(fn).replace('_measured.h5', '')} | {i} | {m} | {meas[row]:.3f} | "
                      f"{e['shipped']:+.1%} | {e['staggered']:+.1%} | {e['convoy']:+.1%} | {ratio[0]} | {ratio[1]} |")
    finally:
        for p in paths.values():
            os.unlink(p)
    print("\n| tile rows | points | shipped median / worst | staggered | convoy |\n|---|---|---|---|---|")
    for m in (16, 32, 64, 128):
        if (m, "shipped") not in errs:
            continue
        cell = lambda k: f"{np.median(np.abs(errs[(m, k)])):.1%} / {np.max(np.abs(errs[(m, k)])):.1%}"  # noqa: E731
        print(f"| {m} | {len(errs[(m, 'shipped')])} | {cell('shipped')} | {cell('staggered')} | {cell('convoy')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
