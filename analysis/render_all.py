#!/usr/bin/env python3
"""Regenerates the committed figures: one report per result file.

    render_all.py [FILE.h5 ...] [--results DIR] [--out DIR] [--formats png,svg]

With --committed it renders the HEAD versions (git show) of the tracked files instead of the
working tree's. Without files it renders every results/**/*.h5 with /points or /plan (not under the output folder)
into <out>/<stem>/ (default results/figures/<stem>/; another card than the H200: <card>_<stem>/,
and CTA-record runs under ctas/ skipped), clearing stale files there first, and
writes <out>/README.md listing the reports with their total size.
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import os
import importlib.util
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET_MIB = 5  # committed figures stay small
# Raw device runs (the *_measured.h5 files carry them scored), and the FA2 copies of the committed
# sweeps (the same own-kernel figures as the sweeps' reports; their FA2 errors are in SUMMARY.md).
# The committed sweeps re-measured with superseded kernels (sessions 4-8) keep their tables in
# results/h200/measured/SUMMARY.md, not figures: the repository stays small enough to travel to
# the GPU machine.
DEFAULT_EXCLUDE = ("*_device_run.h5", "*_sweep_fa2_measured.h5", "*_s4_measured.h5",
                   "*_s5_measured.h5", "*_s6_measured.h5", "*_s7_measured.h5", "*_s8_measured.h5")
# Folders of single-point diagnostic runs (the CTA progress records): their tables live in the
# folder's README, not in figures.
EXCLUDE_DIRS = ("ctas",)
# The card whose results keep bare report names (the calibrated card); another card's folder
# (results/h100/...) prefixes its reports with the card, so the same scenario measured on two
# cards gets two reports.
HOME_CARD = "h200"
CARD_FOLDERS = ("h100", "h200", "b200", "b300")


def report_name(path: str, results: str, qualify: bool = False) -> str:
    """The report folder's name for a result file: its stem, prefixed by the card folder it sits
    under when that is not the home card (results/h100/heldout27/x_measured.h5 -> h100_x_measured);
    with `qualify`, also by its own folder (h100_heldout27_x_measured)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = os.path.relpath(path, results).split(os.sep)[:-1]
    name = f"{parts[-1]}_{stem}" if qualify and parts and parts[-1] not in CARD_FOLDERS else stem
    return f"{parts[0]}_{name}" if parts and parts[0] in CARD_FOLDERS and parts[0] != HOME_CARD else name


def report_names(files: list, results: str) -> list:
    """report_name of each file; files whose names clash (one scenario measured in two sessions)
    are told apart by their folder."""
    names = [report_name(f, results) for f in files]
    return [report_name(f, results, qualify=names.count(n) > 1) for f, n in zip(files, names)]


def folder_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def export_committed(results: str, dest: str) -> str:
    """Writes the HEAD version of every tracked .h5 under `results` into dest; returns the
    folder that plays the role of `results`."""
    top = subprocess.check_output(["git", "rev-parse", "--show-toplevel"], text=True).strip()
    rel_results = os.path.relpath(os.path.abspath(results), top)
    paths = subprocess.check_output(["git", "-C", top, "ls-files", "--", rel_results],
                                    text=True).split("\n")
    for path in paths:
        if not path.endswith(".h5"):
            continue
        blob = subprocess.check_output(["git", "-C", top, "show", f"HEAD:{path}"])
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(blob)
    return os.path.join(dest, rel_results)


def is_report_input(path: str) -> bool:
    """A file with /points or /plan (other .h5 files under results/, e.g. the routing
    diagnostics' activations, are not cisa-sim result tables)."""
    try:
        import h5py
        with h5py.File(path, "r") as f:
            return "points" in f or "plan" in f
    except (ImportError, OSError):
        return True  # let report.py say what is wrong


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Render the report of every committed result file.")
    ap.add_argument("files", nargs="*", help="result files (default: RESULTS/**/*.h5)")
    ap.add_argument("--results", default="results", help="folder searched for .h5 files")
    ap.add_argument("--out", default=os.path.join("results", "figures"), help="output root")
    ap.add_argument("--formats", default="png,svg", help="figure formats")
    ap.add_argument("--exclude", action="append", metavar="GLOB",
                    help="file-name pattern to skip when searching (repeatable; default "
                         f"{' '.join(DEFAULT_EXCLUDE)}: the raw device runs, whose measurements "
                         "the *_measured.h5 files carry scored against the current model)")
    ap.add_argument("--committed", action="store_true",
                    help="render the HEAD versions of the result files (git show), not the "
                         "working tree's, so committed figures match committed data")
    ap.add_argument("--full-colour-png", action="store_true",
                    help="keep full-colour PNGs (default: 256 colours, about 3x smaller)")
    args = ap.parse_args(argv)

    files = args.files
    shown_root = args.results
    tmp = None
    if args.committed and not files:
        tmp = tempfile.TemporaryDirectory(prefix="cisa_render_all_")
        args.results = export_committed(args.results, tmp.name)
    if not files:
        out_abs = os.path.abspath(args.out)
        files = sorted(f for f in glob.glob(os.path.join(args.results, "**", "*.h5"),
                                            recursive=True)
                       if not os.path.abspath(f).startswith(out_abs + os.sep))
        excludes = args.exclude if args.exclude is not None else list(DEFAULT_EXCLUDE)
        files = [f for f in files
                 if not any(fnmatch.fnmatch(os.path.basename(f), g) for g in excludes)
                 and not set(os.path.relpath(f, args.results).split(os.sep)[:-1]) & set(EXCLUDE_DIRS)]
        files = [f for f in files if is_report_input(f)]  # e.g. skip route activations
    if not files:
        print(f"render_all: no cisa-sim result files under {args.results}/", file=sys.stderr)
        return 2
    stems = report_names(files, args.results)
    dup = sorted({s for s in stems if stems.count(s) > 1})
    if dup:
        clash = [f for f, s in zip(files, stems) if s in dup]
        print(f"render_all: several files would share the report name(s) {', '.join(dup)}: "
              f"{', '.join(clash)} (rename one, or render them one at a time with --out)",
              file=sys.stderr)
        return 2

    missing = [m for m in ("numpy", "h5py", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:  # before touching any committed report
        print(f"render_all: missing Python module(s) {', '.join(missing)} in {sys.executable}; nothing "
              "was changed (scripts/install-deps.sh, or run with an interpreter that has them)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    rows, worst = [], 0
    for f, stem in zip(files, stems):
        dest = os.path.join(args.out, stem)
        fresh = dest + ".rendering"  # a failed report leaves the previous one in place
        if os.path.isdir(fresh):
            shutil.rmtree(fresh)
        cmd = [sys.executable, os.path.join(HERE, "report.py"), f, "--out", fresh,
               "--formats", args.formats]
        if not args.full_colour_png:
            cmd.append("--compact-png")
        rc = subprocess.call(cmd)
        worst = max(worst, rc)
        if rc == 0:
            if os.path.isdir(dest):
                shutil.rmtree(dest)
            os.replace(fresh, dest)
        elif os.path.isdir(fresh):
            shutil.rmtree(fresh)
        size = folder_size(dest) if os.path.isdir(dest) else 0
        rows.append((stem, f, rc, size))

    if not args.files:  # drop reports of result files that no longer exist
        for name in sorted(os.listdir(args.out)):
            path = os.path.join(args.out, name)
            if name not in stems and not name.endswith(".rendering") and os.path.isfile(os.path.join(path, "index.md")):
                shutil.rmtree(path)
                print(f"render_all: removed stale {path}/")

    lines = ["# Figures rendered from the committed result files", "",
             "Regenerate with `analysis/render_all.py --committed` (or `cisa-sim report FILE.h5 --out "
             "results/figures/<stem>`).", "",
             "| report | source | size |", "|---|---|---|"]
    for stem, f, rc, size in rows:
        status = "" if rc == 0 else f" (exit {rc})"
        src = os.path.join(shown_root, os.path.relpath(f, args.results)) if not args.files \
            else os.path.relpath(f)
        lines.append(f"| [{stem}]({stem}/index.md){status} | `{src}` "
                     f"| {size / 1024:.0f} KiB |")
    total = sum(r[3] for r in rows)
    lines += ["", f"Total: {total / 1024 / 1024:.2f} MiB.", ""]
    with open(os.path.join(args.out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    print(f"render_all: {len(rows)} reports, {total / 1024 / 1024:.2f} MiB in {args.out}/")
    if total > BUDGET_MIB * 1024 * 1024:
        print(f"render_all: warning: more than {BUDGET_MIB} MiB; consider --formats png",
              file=sys.stderr)
    return worst


if __name__ == "__main__":
    sys.exit(main())
