#!/usr/bin/env python3
"""Renders the report from the committed fixture (and variants of it) and checks that every
expected figure, table and the index are produced and non-trivial.

    test_report.py [--analysis-dir DIR] [--fixture FILE.h5] [unittest args]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.environ.get("CISA_ANALYSIS_DIR", os.path.join(HERE, "..", "..", "analysis"))
FIXTURE = os.path.join(HERE, "fixture_points.h5")

MISSING = []
for _mod in ("numpy", "h5py", "matplotlib"):
    try:
        __import__(_mod)
    except ImportError:
        MISSING.append(_mod)
if MISSING:
    sys.stderr.write(
        f"test_report.py: FAIL: Python module(s) {', '.join(MISSING)} missing for interpreter "
        f"{sys.executable}.\nInstall them with scripts/install-deps.sh (Debian packages "
        "python3-numpy python3-h5py python3-matplotlib), or configure CMake with "
        "-DCISA_ANALYSIS_PYTHON=/path/to/python3 that has them.\n")
    sys.exit(1)

import h5py  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402

MIN_W, MIN_H = 300, 200
MIN_INK = 0.02  # fraction of pixels that differ from the background


def run(*args, check_rc=None):
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    if check_rc is not None and proc.returncode != check_rc:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}, expected {check_rc}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def report(h5, out):
    return run(os.path.join(ANALYSIS, "report.py"), h5, "--out", out, check_rc=0)


def make_fixture(path, *flags):
    run(os.path.join(ANALYSIS, "make_fixture.py"), path, *flags, check_rc=0)


def combos(h5path, group, *keys):
    with h5py.File(h5path, "r") as f:
        cols = [f[group][k].asstr()[...] for k in keys]
    return sorted(set(zip(*(c.tolist() for c in cols))))


def expected_figures(h5path, measured=True, plan=True):
    stems = ["ceilings_vs_context", "ceilings_vs_budget"]
    for m, hw, ph in combos(h5path, "points", "model", "hardware", "phase"):
        stems += [f"speedup_{m}_{hw}_{ph}", f"components_{m}_{hw}_{ph}"]
    for m, hw in combos(h5path, "points", "model", "hardware"):
        stems.append(f"roofline_{m}_{hw}")
    if measured:
        stems.append("pred_vs_meas")
    if plan:
        for m, hw in combos(h5path, "plan", "model", "hardware"):
            stems += [f"capacity_{m}_{hw}", f"capacity_best_{m}_{hw}"]
    return stems


class ReportTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="cisa_report_test_")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def check_png(self, path):
        img = mpimg.imread(path)
        h, w = img.shape[:2]
        self.assertGreaterEqual(w, MIN_W, f"{path}: width {w}")
        self.assertGreaterEqual(h, MIN_H, f"{path}: height {h}")
        rgb = img[..., :3].astype(np.float64)
        if rgb.max() > 1.0:
            rgb /= 255.0
        background = rgb[0, 0]
        ink = np.mean(np.any(np.abs(rgb - background) > 0.05, axis=-1))
        self.assertGreater(ink, MIN_INK, f"{path}: only {ink:.1%} non-background pixels")
        # not a single colour blob either: several distinct colours
        self.assertGreater(len(np.unique((rgb * 15).round().reshape(-1, 3), axis=0)), 4, path)

    def check_svg(self, path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        self.assertIn("<svg", text, path)
        self.assertGreater(len(text), 2000, f"{path}: suspiciously small SVG")
        return text

    def check_report(self, out, stems, tables):
        with open(os.path.join(out, "index.md"), encoding="utf-8") as fh:
            index = fh.read()
        for stem in stems:
            for ext in ("png", "svg"):
                name = f"{stem}.{ext}"
                path = os.path.join(out, name)
                self.assertTrue(os.path.isfile(path), f"missing {name}")
                self.assertIn(f"({name})", index, f"index.md does not link {name}")
            self.check_png(os.path.join(out, f"{stem}.png"))
            self.check_svg(os.path.join(out, f"{stem}.svg"))
        for t in tables:
            path = os.path.join(out, f"{t}.md")
            self.assertTrue(os.path.isfile(path), f"missing {t}.md")
            with open(path, encoding="utf-8") as fh:
                self.assertIn("|---", fh.read(), f"{t}.md has no table")
            self.assertIn(f"({t}.md)", index, f"index.md does not link {t}.md")
        produced = {f for f in os.listdir(out) if f.endswith((".png", ".svg"))}
        expected = {f"{s}.{e}" for s in stems for e in ("png", "svg")}
        self.assertEqual(produced, expected, "unexpected or missing figure files")
        return index

    def test_full_fixture(self):
        out = os.path.join(self.tmp, "full")
        report(FIXTURE, out)
        index = self.check_report(out, expected_figures(FIXTURE),
                                  ["ceilings", "speedups", "components", "pred_vs_meas"])
        self.assertIn("2026-11-29", index)
        with open(os.path.join(out, "ceilings.md"), encoding="utf-8") as fh:
            ceil = fh.read()
        # method §3 worked values at L=1M, c=16: K=4096 near-end G=4 14.22x, decode 10.67x
        self.assertRegex(ceil, r"\| 4,096 \| 1M \| 4 \| 16x \| 14\.22x \| 7\.76x \| 10\.67x \|")
        svg = self.check_svg(os.path.join(out, "speedup_inkling-small_h200_decode.svg"))
        self.assertIn("measured (open diamonds)", svg)
        self.assertIn("inkling-small · h200 · 2026-11-29", svg)  # title: model, GPU, date

    def test_no_measurements_no_plan_no_peaks(self):
        h5 = os.path.join(self.tmp, "bare.h5")
        make_fixture(h5, "--no-measured", "--no-plan", "--no-hw-peaks", "--models", "inkling-small",
                     "--vlen-strings")
        out = os.path.join(self.tmp, "bare")
        report(h5, out)
        index = self.check_report(out, expected_figures(h5, measured=False, plan=False),
                                  ["ceilings", "speedups", "components"])
        self.assertFalse(os.path.exists(os.path.join(out, "pred_vs_meas.md")))
        self.assertIn("nothing is measured", index)
        self.assertIn("no /plan group", index)
        self.assertIn("no hardware peaks", index)
        svg = self.check_svg(os.path.join(out, "speedup_inkling-small_h200_decode.svg"))
        self.assertIn("no measurements", svg)

    def test_bad_input_exits_2(self):
        missing = os.path.join(self.tmp, "missing.h5")
        proc = run(os.path.join(ANALYSIS, "report.py"), missing, "--out", self.tmp, check_rc=2)
        self.assertIn("no such file", proc.stderr)
        junk = os.path.join(self.tmp, "junk.h5")
        with open(junk, "w") as fh:
            fh.write("not hdf5\n")
        proc = run(os.path.join(ANALYSIS, "report.py"), junk, "--out", self.tmp, check_rc=2)
        self.assertIn("not a readable HDF5 file", proc.stderr)
        nogroups = os.path.join(self.tmp, "nogroups.h5")
        with h5py.File(nogroups, "w") as f:
            f.create_group("other")
        proc = run(os.path.join(ANALYSIS, "report.py"), nogroups, "--out", self.tmp, check_rc=2)
        self.assertIn("neither a /points nor a /plan group", proc.stderr)

    def test_plan_only(self):
        h5 = os.path.join(self.tmp, "plan.h5")
        make_fixture(h5, "--plan-only")
        out = os.path.join(self.tmp, "plan")
        run(os.path.join(ANALYSIS, "report.py"), h5, "--out", out, "--compact-png", check_rc=0)
        stems = []
        for m, hw in combos(h5, "plan", "model", "hardware"):
            stems += [f"capacity_{m}_{hw}", f"capacity_best_{m}_{hw}"]
        index = self.check_report(out, stems, [])
        self.assertIn("no /points group", index)
        svg = self.check_svg(os.path.join(out, "capacity_best_inkling-small_h200.svg"))
        self.assertIn("CISA ÷ dense", svg)

    def test_committed_fixture_matches_generator(self):
        h5 = os.path.join(self.tmp, "regen.h5")
        make_fixture(h5)
        self.assertLess(os.path.getsize(FIXTURE), 200 * 1024, "fixture must stay < 200 KB")
        with h5py.File(FIXTURE, "r") as a, h5py.File(h5, "r") as b:
            for group in ("points", "plan"):
                self.assertEqual(sorted(a[group]), sorted(b[group]), group)
                for col in a[group]:
                    da, db = a[group][col], b[group][col]
                    if h5py.check_string_dtype(da.dtype):
                        self.assertEqual(list(da.asstr()[...]), list(db.asstr()[...]), col)
                    else:
                        np.testing.assert_allclose(da[...], db[...], rtol=1e-12, err_msg=col)
                    self.assertEqual(da.attrs["unit"], db.attrs["unit"], col)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--analysis-dir" in args:
        i = args.index("--analysis-dir")
        ANALYSIS = args[i + 1]
        del args[i:i + 2]
    if "--fixture" in args:
        i = args.index("--fixture")
        FIXTURE = args[i + 1]
        del args[i:i + 2]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2)
