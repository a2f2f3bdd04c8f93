#!/usr/bin/env python3
"""Renders every applicable figure (PNG + SVG), the markdown tables and an index.md for one
cisa-sim HDF5 result file.

    report.py FILE.h5 [--out DIR] [--formats png,svg] [--compact-png]

Exit codes: 0 success, 2 bad input or missing Python modules, 1 a figure failed (the others
are still written and the failure is listed in index.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

REQUIRED = ("numpy", "h5py", "matplotlib")
INLINE_TABLE_LINES = 40


def check_modules() -> list:
    import importlib.util
    return [m for m in REQUIRED if importlib.util.find_spec(m) is None]


def default_out(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.join("out", f"report_{stem}")


def write_index(result, cat, out_dir: str) -> None:
    a = result.attr
    lines = [f"# cisa-sim report: {a('scenario_name', os.path.basename(result.path))}", ""]
    main = next(g for g in (result.points, result.group("plan"), result.group("designs")) if g is not None)
    models = sorted(set(main.text("model", a("model") or a("deploy_model")).tolist()))
    hws = sorted(set(main.text("hardware", a("hardware")).tolist()))
    lines += ["| | |", "|---|---|",
              f"| file | `{os.path.basename(result.path)}` |",
              f"| model | {', '.join(m for m in models if m) or '-'} |",
              f"| hardware | {', '.join(h for h in hws if h) or '-'} |",
              f"| created (UTC) | {a('created_utc', '-')} |",
              f"| tool version | {a('tool_version', '-')} |",
              f"| git hash | `{a('git_hash', '-')}` |",
              f"| command line | `{a('command_line', '-')}` |",
              ]
    for name, group in result.groups.items():
        lines.append(f"| rows in /{name} | {len(group):,} |")
    if result.points is not None and "pred_basis" in result.points:
        bases = sorted(set(result.points["pred_basis"].tolist()))
        lines.append(f"| prediction basis | {', '.join(bases)} |")
    elif a("basis"):
        lines.append(f"| prediction basis | {a('basis')} |")
    for key in ("hw_read_bw_tbs", "hw_bf16_tflops"):
        if key in result.attrs:
            lines.append(f"| {key} | {result.attrs[key]} |")
    lines.append("")
    if cat.errors or cat.notes:
        lines += ["## Notes", ""]
        lines += [f"- **error**: {e}" for e in cat.errors]
        lines += [f"- {n}" for n in cat.notes]
        lines.append("")
    lines += ["## Figures", ""]
    if not cat.figures:
        lines += ["(none)", ""]
    for f in cat.figures:
        png = next((x for x in f.files if x.endswith(".png")), f.files[0])
        others = ", ".join(f"[{x.rsplit('.', 1)[1].upper()}]({x})" for x in f.files)
        lines += [f"### {f.title}", "", f"{f.caption} ({others})", "", f"![{f.title}]({png})", ""]
    lines += ["## Tables", ""]
    if not cat.tables:
        lines += ["(none)", ""]
    for t in cat.tables:
        lines += [f"- [{t.title}]({t.file})"]
    lines.append("")
    for t in cat.tables:  # short tables inline, long ones only linked
        if t.markdown.count("\n") <= INLINE_TABLE_LINES:
            lines += [f"### {t.title}", "", t.markdown, ""]
    for key in ("scenario_yaml", "hardware_yaml"):
        if a(key):
            lines += [f"<details><summary>{key}</summary>", "", "```yaml", a(key).rstrip(), "```",
                      "", "</details>", ""]
    with open(os.path.join(out_dir, "index.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="report.py",
        description="Render figures, tables and index.md for a cisa-sim HDF5 result file.")
    ap.add_argument("file", metavar="FILE.h5", help="cisa-sim result file")
    ap.add_argument("--out", metavar="DIR", help="output folder (default out/report_<stem>/)")
    ap.add_argument("--formats", default="png,svg",
                    help="comma-separated figure formats (default png,svg)")
    ap.add_argument("--compact-png", action="store_true",
                    help="256-colour PNGs, about 3x smaller (used for committed figures)")
    args = ap.parse_args(argv)

    missing = check_modules()
    if missing:
        print(f"report.py: missing Python module(s): {', '.join(missing)} (interpreter "
              f"{sys.executable}). Install them with scripts/install-deps.sh or "
              "`apt-get install python3-numpy python3-h5py python3-matplotlib`.",
              file=sys.stderr)
        return 2

    import cisa_h5

    try:
        result = cisa_h5.load(args.file)
    except cisa_h5.ReportInputError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2

    from fig_common import Catalogue
    import fig_ceilings, fig_speedup, fig_components, fig_roofline, fig_scatter, fig_capacity
    import fig_designs  # cisa-sim designs (/designs, issue 15)
    out_dir = args.out or default_out(args.file)
    os.makedirs(out_dir, exist_ok=True)
    formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
    cat = Catalogue(out_dir=out_dir, formats=formats, compact_png=args.compact_png)
    if result.points is None and result.group("designs") is None:
        cat.note("The file has no /points group (a planner-only file): only the capacity "
                 "plots from /plan apply.")

    for mod in (fig_ceilings, fig_speedup, fig_components, fig_roofline, fig_scatter,
                fig_capacity, fig_designs):
        try:
            mod.render(result, cat)
        except Exception as e:  # keep going: one broken figure must not hide the others
            name = mod.__name__
            cat.errors.append(f"{name} failed: {type(e).__name__}: {e}")
            traceback.print_exc()
    write_index(result, cat, out_dir)
    n_files = sum(len(f.files) for f in cat.figures) + len(cat.tables) + 1
    print(f"report: {len(cat.figures)} figures, {len(cat.tables)} tables, {n_files} files "
          f"in {out_dir}/ (index.md)")
    for e in cat.errors:
        print(f"report: error: {e}", file=sys.stderr)
    return 1 if cat.errors else 0


if __name__ == "__main__":
    sys.exit(main())
