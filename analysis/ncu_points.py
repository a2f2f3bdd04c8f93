#!/usr/bin/env python3
"""Nsight Compute DRAM byte counts for chosen points of a cisa-sim result file.

    ncu_points.py RESULT.h5 --binary PATH --scenario S [--set k=v ...]
                  [--points 0,5,9 | --sample N] [--ncu ncu] [--cache-control all|none]
                  [--timeout 300] [--keep-raw DIR]
    ncu_points.py RESULT.h5 --from-raw DIR [--points ... | --sample N]

For each point the measuring binary runs once under ncu in profile mode (CISA_MEASURE_ONLY=<point>,
CISA_MEASURE_PROFILE=1): the dense baseline once, an `ncu_boundary_kernel`, the CISA step once,
`ncu_boundary_kernel` again. One process per point, so every launch belongs to that point.
Launches before the first boundary are the dense attention; between the boundaries they are
sorted by kernel name into scoring, top-k and CISA attention.

Adds to /points (NaN on rows not profiled): ncu_dram_read_bytes_<c>, ncu_dram_write_bytes_<c>,
ncu_l2_read_bytes_<c> for c in attention_dense, attention_cisa, scoring, topk, and, where the
file has pred_dram_bytes_<c>, err_bytes_<c> = (ncu read + write) / predicted - 1. The setup
component is a host-to-device copy, not a kernel: ncu has no count for it.

Exit codes: 0 success, 1 some point failed (the others are still written), 2 bad input (the
file is left unchanged).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h5_columns import add_columns, read_points  # noqa: E402

COMPONENTS = ("attention_dense", "attention_cisa", "scoring", "topk")
READ, WRITE, L2 = "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum"
METRICS = (READ, WRITE, L2)
BOUNDARY = "ncu_boundary_kernel"
# Substring of ncu's "Kernel Name" -> component of the CISA step (after the first boundary).
KERNEL_COMPONENT = (("attn_kernel", "attention_cisa"), ("combine_kernel", "attention_cisa"),
                    ("sum_iq_kernel", "scoring"), ("score_kernel", "scoring"), ("topk_kernel", "topk"))
KERNEL_REGEX = "|".join([k for k, _ in KERNEL_COMPONENT] + [BOUNDARY])
# The target for the byte model: within 5% on the streaming kernels. Top-k reads a
# small score array whose caching the model does not try to follow, so it has no target.
TARGETS = {"attention_dense": 0.05, "attention_cisa": 0.05, "scoring": 0.05}
# Columns that name a point; the profiled run's row must agree with the result file's row.
AXES = ("model", "hardware", "phase", "context_tokens", "budget_chunks", "qshare_g", "batch",
        "prefill_tokens", "chunk_tokens", "window_pages", "q_heads", "kv_heads", "head_dim")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


class InputError(Exception):
    """Bad command line or input file: exit 2, nothing written."""


class PointError(Exception):
    """One point could not be profiled or parsed: recorded, the others go on."""


def to_base(value: str, unit: str) -> float:
    """A metric value in base units (bytes, sectors). ncu prints '1,234,567' and scales to
    Kbyte/Mbyte/Gbyte (decimal prefixes) unless --print-units base; both are accepted."""
    x = float(value.replace(",", "").strip())
    u = unit.strip()
    if u in ("KB", "MB", "GB", "TB"):
        return x * _PREFIX[u[0]]
    for base in ("byte", "sector"):
        if u.endswith(base) and u[:-len(base)] in _PREFIX:
            return x * _PREFIX[u[:-len(base)]]
    raise ValueError(f"unknown unit {unit!r}")


def parse_ncu_csv(text: str) -> list:
    """The launches of an `ncu --csv` output, in launch order: [(id, kernel name, {metric: value})].
    The application's own output and ncu's ==PROF== lines are interleaved; the table is the
    quoted lines from the "ID" header on."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise PointError("no ncu CSV table in the output (no kernel matched, or ncu failed)")
    table = [l for l in lines[start:] if l.startswith('"')]
    reader = csv.reader(io.StringIO("\n".join(table)))
    header = next(reader)
    need = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")
    missing = [c for c in need if c not in header]
    if missing:
        raise PointError(f"ncu CSV header lacks {', '.join(missing)}")
    col = {c: header.index(c) for c in need}
    launches = {}
    for row in reader:
        if len(row) != len(header) or row == header:
            continue  # a stray quoted line of the application, or a repeated header
        try:
            lid = int(row[col["ID"]])
        except ValueError:
            raise PointError(f"ncu CSV: launch ID {row[col['ID']]!r} is not a number")
        name = row[col["Kernel Name"]]
        entry = launches.setdefault(lid, (lid, name, {}))
        metric = row[col["Metric Name"]]
        if metric not in METRICS:
            continue
        try:
            entry[2][metric] = to_base(row[col["Metric Value"]], row[col["Metric Unit"]])
        except ValueError as e:
            raise PointError(f"launch {lid} ({short_name(name)}) {metric}: "
                             f"{row[col['Metric Value']]!r} {row[col['Metric Unit']]!r}: {e}")
    return [launches[k] for k in sorted(launches)]


def short_name(name: str) -> str:
    """The known kernel a demangled ncu name refers to, else the name itself."""
    for k in [BOUNDARY] + [k for k, _ in KERNEL_COMPONENT]:
        if k in name:
            return k
    return name


def attribute(launches: list) -> tuple:
    """Sums the launches per component: ({component: (read, write, l2 read bytes)}, warnings).
    Dense baseline before the first boundary, the CISA step between the first and second."""
    bounds = [i for i, (_, name, _) in enumerate(launches) if BOUNDARY in name]
    if not bounds:
        raise PointError(f"no {BOUNDARY} among {len(launches)} launches: the binary did not run in "
                         "profile mode (CISA_MEASURE_PROFILE=1 unsupported?)")
    if len(bounds) < 2:
        raise PointError(f"only one {BOUNDARY}: the CISA step did not finish (crash?)")
    warnings = []
    if len(bounds) > 2 or bounds[-1] != len(launches) - 1:
        warnings.append(f"{len(bounds)} boundaries, {len(launches) - 1 - bounds[1]} launches after "
                        "the second; only the first two boundaries are used")
    groups = {c: [] for c in COMPONENTS}
    for _, name, m in launches[:bounds[0]]:
        if short_name(name) not in ("attn_kernel", "combine_kernel"):
            warnings.append(f"{short_name(name)} before the first boundary counted as attention_dense")
        groups["attention_dense"].append(m)
    for _, name, m in launches[bounds[0] + 1:bounds[1]]:
        comp = next((c for k, c in KERNEL_COMPONENT if k in name), None)
        if comp is None:
            warnings.append(f"unknown kernel {name!r} in the CISA step ignored")
            continue
        groups[comp].append(m)
    sums = {}
    for comp, ms in groups.items():
        if not ms:
            warnings.append(f"no {comp} launch")
            sums[comp] = (np.nan, np.nan, np.nan)
            continue
        # A metric missing from a launch makes the component's sum NaN rather than too small.
        rd = sum(m.get(READ, np.nan) for m in ms)
        wr = sum(m.get(WRITE, np.nan) for m in ms)
        l2 = sum(m.get(L2, np.nan) for m in ms) * 32  # an L2 sector is 32 bytes
        sums[comp] = (rd, wr, l2)
    return sums, warnings


# --- choosing points -------------------------------------------------------------------------

def parse_points(text: str, point_index) -> list:
    try:
        pts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--points {text!r}: expected a comma list of point_index values, e.g. 0,5,9")
    if not pts:
        raise InputError("--points: empty list")
    have = set(int(p) for p in point_index)
    absent = [p for p in pts if p not in have]
    if absent:
        raise InputError(f"--points: {', '.join(map(str, absent))} not in the file "
                         f"(point_index {min(have)}..{max(have)}, {len(have)} rows)")
    return sorted(set(pts))


def sample_points(cols: dict, n: int) -> list:
    """n measured points spread evenly by row, every phase covered: each phase gets one point,
    the rest is shared in proportion to the phase's measured rows."""
    if n < 1:
        raise InputError("--sample: need at least 1")
    meas = cols.get("meas_ms_attention_cisa")
    if meas is None:
        raise InputError("--sample: the file has no meas_ms_attention_cisa column; use --points")
    rows = [i for i in range(len(meas)) if np.isfinite(meas[i])]
    if not rows:
        raise InputError("--sample: no measured rows (meas_ms_attention_cisa is NaN everywhere); use --points")
    phase = cols.get("phase", np.array(["all"] * len(meas), dtype=object))
    by_phase = {}
    for r in rows:
        by_phase.setdefault(phase[r], []).append(r)
    phases = list(by_phase)[:n]  # fewer picks than phases: the first n phases
    quota = {p: 1 for p in phases}
    left = min(n, len(rows)) - len(phases)
    while left > 0:  # one at a time to the phase with the most rows per pick so far
        p = max((p for p in phases if quota[p] < len(by_phase[p])),
                key=lambda p: len(by_phase[p]) / quota[p])
        quota[p] += 1
        left -= 1
    chosen = []
    for p in phases:
        rs = by_phase[p]
        for x in np.linspace(0, len(rs) - 1, quota[p]):
            chosen.append(rs[int(round(x))])
    return sorted(int(cols["point_index"][r]) for r in set(chosen))


# --- running ncu -----------------------------------------------------------------------------

def ncu_version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(f"{ncu} --version failed: {e}")
    lines = [l.strip() for l in out.splitlines() if "version" in l.lower()]
    return lines[-1] if lines else (out.strip().splitlines() or ["unknown"])[-1]


def ncu_command(args, out_h5: str) -> list:
    cmd = [args.ncu, "--clock-control", "none", "--cache-control", args.cache_control,
           "--print-units", "base", "--metrics", ",".join(METRICS),
           "-k", f"regex:{KERNEL_REGEX}", "--csv", args.binary]
    if not os.path.basename(args.binary).startswith("cisa-measure"):
        cmd += ["--measure", "on"]  # cisa-sim measures only when asked; cisa-measure always does
    cmd += ["--scenario", args.scenario]
    for kv in args.set or []:
        cmd += ["--set", kv]
    return cmd + ["--out", out_h5]


def profile_point(args, point: int, workdir: str) -> tuple:
    """Runs ncu for one point: (csv text, meta dict, path of the binary's result file)."""
    out_h5 = os.path.join(workdir, f"point_{point}.h5")
    cmd = ncu_command(args, out_h5)
    env = dict(os.environ, CISA_MEASURE_ONLY=str(point), CISA_MEASURE_PROFILE="1")
    # Own process group, so a timeout also ends the application ncu started.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        save_raw(args, point, out, err, None)
        raise PointError(f"timed out after {args.timeout:g} s (raise --timeout?)")
    meta = {"point": point, "ncu_version": args.ncu_version, "cache_control": args.cache_control,
            "profiled_utc": utc_now(), "returncode": proc.returncode,
            "command": " ".join(cmd), "env": f"CISA_MEASURE_ONLY={point} CISA_MEASURE_PROFILE=1"}
    save_raw(args, point, out, err, meta)
    errors = [l for l in (out + err).splitlines() if l.startswith("==ERROR==")]
    if proc.returncode != 0 or errors:
        tail = "; ".join(errors or err.strip().splitlines()[-3:] or out.strip().splitlines()[-3:])
        raise PointError(f"ncu exited {proc.returncode}: {tail}")
    return out, meta, out_h5


def save_raw(args, point, out, err, meta) -> None:
    if not args.keep_raw:
        return
    base = os.path.join(args.keep_raw, f"point_{point}")
    with open(base + ".csv", "w") as f:
        f.write(out or "")
    with open(base + ".stderr.txt", "w") as f:
        f.write(err or "")
    if meta is not None:
        with open(base + ".meta.json", "w") as f:
            json.dump(meta, f, indent=1)


def read_raw(raw_dir: str, point: int) -> tuple:
    path = os.path.join(raw_dir, f"point_{point}.csv")
    if not os.path.isfile(path):
        raise PointError(f"{path} missing")
    with open(path) as f:
        text = f.read()
    meta = {}
    if os.path.isfile(os.path.join(raw_dir, f"point_{point}.meta.json")):
        with open(os.path.join(raw_dir, f"point_{point}.meta.json")) as f:
            meta = json.load(f)
    return text, meta


def raw_points(raw_dir: str) -> list:
    pts = []
    for p in glob.glob(os.path.join(raw_dir, "point_*.csv")):
        m = re.fullmatch(r"point_(\d+)\.csv", os.path.basename(p))
        if m:
            pts.append(int(m.group(1)))
    return sorted(pts)


def check_axes(cols: dict, row: int, out_h5: str, point: int) -> None:
    """The profiled run must have measured the same configuration as the file's row (same
    --scenario and --set), else the bytes belong to another point."""
    if not os.path.isfile(out_h5):
        print(f"  warning: point {point}: the binary wrote no {os.path.basename(out_h5)}; "
              "configuration not checked", file=sys.stderr)
        return
    other = read_points(out_h5)
    rows = np.nonzero(np.asarray(other.get("point_index", [])) == point)[0]
    if len(rows) != 1:
        raise PointError(f"the profiled run has no point_index {point} (another scenario?)")
    diff = [f"{a} {other[a][rows[0]]} vs {cols[a][row]}" for a in AXES
            if a in cols and a in other and other[a][rows[0]] != cols[a][row]]
    if diff:
        raise PointError("the profiled run's point differs from the file's row (wrong --scenario "
                         f"or --set?): {'; '.join(diff)}")


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- output ----------------------------------------------------------------------------------

def fmt_bytes(x) -> str:
    return "n/a" if not np.isfinite(x) else f"{x / 1e6:,.2f} MB"


def fmt_err(x) -> str:
    return "n/a" if not np.isfinite(x) else f"{x * 100:+.2f}%"


def print_table(points, rows, cols, new, pred_comps) -> None:
    print(f"{'point':>5}  {'component':16} {'pred bytes':>16} {'ncu read':>16} {'ncu write':>16} {'err':>9}")
    for p in points:
        r = rows[p]
        for c in COMPONENTS:
            pred = cols[f"pred_dram_bytes_{c}"][r] if c in pred_comps else np.nan
            err = new[f"err_bytes_{c}"][0][r] if c in pred_comps else np.nan
            print(f"{p:>5}  {c:16} {fmt_bytes(pred):>16} {fmt_bytes(new[f'ncu_dram_read_bytes_{c}'][0][r]):>16} "
                  f"{fmt_bytes(new[f'ncu_dram_write_bytes_{c}'][0][r]):>16} {fmt_err(err):>9}")
        if "pred_dram_bytes_setup" in cols:
            print(f"{p:>5}  {'setup':16} {fmt_bytes(cols['pred_dram_bytes_setup'][r]):>16} "
                  f"{'n/a':>16} {'n/a':>16} {'n/a':>9}   host-to-device copy: no ncu count")
    if not pred_comps:
        return
    print()
    print(f"{'component':16} {'n':>3} {'median |err|':>13} {'worst |err|':>12}  verdict")
    for c in COMPONENTS:
        if c not in pred_comps:
            continue
        e = np.array([new[f"err_bytes_{c}"][0][rows[p]] for p in points])
        e = np.abs(e[np.isfinite(e)])
        if len(e) == 0:
            print(f"{c:16} {0:>3} {'n/a':>13} {'n/a':>12}  no data")
            continue
        tgt = TARGETS.get(c)
        if tgt is None:
            verdict = "no target (informational)"
        elif e.max() <= tgt:
            verdict = f"PASS: every point within {tgt:.0%}"
        else:
            verdict = f"MISS: {int((e > tgt).sum())} of {len(e)} points beyond {tgt:.0%}"
        print(f"{c:16} {len(e):>3} {np.median(e) * 100:>12.2f}% {e.max() * 100:>11.2f}%  {verdict}")


# --- main ------------------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Nsight Compute DRAM bytes per component for chosen points of a cisa-sim result file.")
    ap.add_argument("result", help="cisa-sim result file (.h5); columns are added to its /points")
    ap.add_argument("--binary", help="measuring binary: cisa-sim (gets --measure on) or cisa-measure")
    ap.add_argument("--scenario", help="scenario file the result was made from")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE", help="override, as for cisa-sim")
    pick = ap.add_mutually_exclusive_group()
    pick.add_argument("--points", help="comma list of point_index values")
    pick.add_argument("--sample", type=int, metavar="N", help="N measured points spread over the rows")
    ap.add_argument("--ncu", default="ncu", help="Nsight Compute command line (default: ncu on PATH)")
    ap.add_argument("--cache-control", choices=("all", "none"), default="all",
                    help="ncu cache control: all flushes caches before each kernel (default)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per point (default 300)")
    ap.add_argument("--keep-raw", metavar="DIR", help="save each point's ncu output in DIR")
    ap.add_argument("--from-raw", metavar="DIR", help="re-parse outputs saved by --keep-raw; runs nothing")
    return ap.parse_args(argv)


def check_inputs(args) -> None:
    if not os.path.isfile(args.result):
        raise InputError(f"{args.result}: no such file")
    if args.from_raw:
        if not os.path.isdir(args.from_raw):
            raise InputError(f"--from-raw {args.from_raw}: no such directory")
        return
    if not args.binary or not args.scenario:
        raise InputError("--binary and --scenario are needed to profile (or give --from-raw DIR)")
    if not (os.path.isfile(args.binary) and os.access(args.binary, os.X_OK)):
        raise InputError(f"--binary {args.binary}: no such executable")
    if not os.path.isfile(args.scenario):
        raise InputError(f"--scenario {args.scenario}: no such file")
    found = shutil.which(args.ncu)
    if not found:
        raise InputError(f"--ncu {args.ncu}: not found (Nsight Compute not installed or not on PATH)")
    args.ncu = found
    if args.timeout <= 0:
        raise InputError("--timeout must be positive")


def run(args) -> int:
    check_inputs(args)
    try:
        cols = read_points(args.result)
    except (OSError, ValueError) as e:
        raise InputError(f"{args.result}: {e}")
    if not cols:
        raise InputError(f"{args.result}: /points has no columns")
    n = len(next(iter(cols.values())))
    point_index = cols.get("point_index", np.arange(n))
    rows = {int(p): i for i, p in enumerate(point_index)}

    if args.points:
        points = parse_points(args.points, point_index)
    elif args.sample is not None:
        points = sample_points(cols, args.sample)
    elif args.from_raw:
        points = raw_points(args.from_raw)
        if not points:
            raise InputError(f"--from-raw {args.from_raw}: no point_<i>.csv files")
        absent = [p for p in points if p not in rows]
        if absent:
            raise InputError(f"--from-raw {args.from_raw}: point(s) {', '.join(map(str, absent))} "
                             "have no row in the file (raw outputs of another scenario?)")
    else:
        meas = cols.get("meas_ms_attention_cisa", np.full(n, np.nan))
        points = sorted(int(point_index[i]) for i in range(n) if np.isfinite(meas[i]))
        if not points:
            raise InputError("no measured rows to profile; choose them with --points")

    if args.keep_raw:
        os.makedirs(args.keep_raw, exist_ok=True)
    if not args.from_raw:
        args.ncu_version = ncu_version(args.ncu)
        print(f"ncu_points: {args.ncu_version}; {len(points)} point(s): {', '.join(map(str, points))}",
              file=sys.stderr)

    results, failures, metas = {}, {}, []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ncu_points-") as work:
        for k, p in enumerate(points):
            try:
                if args.from_raw:
                    text, meta = read_raw(args.from_raw, p)
                else:
                    print(f"[{k + 1}/{len(points)}] point {p}: profiling...", file=sys.stderr, flush=True)
                    text, meta, out_h5 = profile_point(args, p, work)
                    check_axes(cols, rows[p], out_h5, p)
                sums, warnings = attribute(parse_ncu_csv(text))
                for w in warnings:
                    print(f"  warning: point {p}: {w}", file=sys.stderr)
                results[p] = sums
                metas.append(meta)
            except PointError as e:
                failures[p] = str(e)
                print(f"  FAILED: point {p}: {e}", file=sys.stderr)
            if not args.from_raw:
                done = time.monotonic() - t0
                eta = done / (k + 1) * (len(points) - k - 1)
                print(f"[{k + 1}/{len(points)}] point {p} done; {done:.0f} s so far, ETA {eta:.0f} s",
                      file=sys.stderr, flush=True)

    if not results:
        print(f"ncu_points: every point failed; {args.result} unchanged", file=sys.stderr)
        return 1

    cache = sorted(set(m.get("cache_control", args.cache_control) for m in metas))
    cache_txt = "/".join(cache)
    new = {}
    for c in COMPONENTS:
        for key, idx, metric in (("dram_read", 0, READ), ("dram_write", 1, WRITE),
                                 ("l2_read", 2, "lts__t_sectors_srcunit_tex_op_read.sum x 32 B")):
            v = np.full(n, np.nan)
            for p, sums in results.items():
                v[rows[p]] = sums[c][idx]
            new[f"ncu_{key}_bytes_{c}"] = (
                v, "bytes", f"Nsight Compute {metric} summed over the component's kernels, one launch "
                            f"of each, cache control {cache_txt} (NaN where not profiled)")
    pred_comps = [c for c in COMPONENTS if f"pred_dram_bytes_{c}" in cols]
    if not pred_comps:
        print("  warning: the file has no pred_dram_bytes_<component> columns; no err_bytes columns "
              "(re-run cisa-sim with a version that writes them)", file=sys.stderr)
    for c in pred_comps:
        total = new[f"ncu_dram_read_bytes_{c}"][0] + new[f"ncu_dram_write_bytes_{c}"][0]
        with np.errstate(divide="ignore", invalid="ignore"):
            err = total / np.asarray(cols[f"pred_dram_bytes_{c}"], dtype=float) - 1
        new[f"err_bytes_{c}"] = (
            err, "fraction", f"(ncu DRAM read + write) / pred_dram_bytes_{c} - 1 "
                             f"(NaN where not profiled)")

    versions = sorted(set(m.get("ncu_version", "unknown") for m in metas)) or ["unknown"]
    dates = sorted(m["profiled_utc"] for m in metas if "profiled_utc" in m) or [utc_now()]
    note = (f"Nsight Compute ({'; '.join(versions)}), --cache-control {cache_txt} --clock-control none, "
            f"metrics {','.join(METRICS)}; points profiled: {','.join(map(str, sorted(results)))}"
            + (f"; failed: {'; '.join(f'{p} ({m})' for p, m in sorted(failures.items()))}" if failures else "")
            + f"; profiled {dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
            + "; setup (host-to-device copy, not a kernel) and other are not counted")
    try:
        add_columns(args.result, new, attrs={"ncu_measurement": note})
    except (OSError, ValueError) as e:
        raise InputError(f"{args.result}: could not write: {e}")

    print_table(sorted(results), rows, cols, new, pred_comps)
    if failures:
        print(f"\nncu_points: {len(failures)} point(s) failed: "
              f"{', '.join(f'{p} ({m})' for p, m in sorted(failures.items()))}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except InputError as e:
        print(f"ncu_points.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
