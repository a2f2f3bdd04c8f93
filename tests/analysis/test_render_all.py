#!/usr/bin/env python3
"""analysis/render_all.py: report names per card folder, and the clash check.

    test_render_all.py --analysis-dir DIR [unittest args]
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def load_render_all():
    spec = importlib.util.spec_from_file_location(
        "render_all", os.path.join(ARGS.analysis_dir, "render_all.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class RenderAllTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cisa_render_all_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_report_names_keep_cards_apart(self):
        r = load_render_all()
        res = os.path.join(self.tmp, "results")
        p = lambda *parts: os.path.join(res, *parts)
        self.assertEqual(r.report_name(p("h200", "heldout27", "x_measured.h5"), res), "x_measured")
        self.assertEqual(r.report_name(p("h100", "heldout27", "x_measured.h5"), res), "h100_x_measured")
        self.assertEqual(r.report_name(p("ultra_tp2_1m.h5"), res), "ultra_tp2_1m")
        self.assertEqual(r.report_name(p("plan", "plan_a.h5"), res), "plan_a")
        # One scenario measured in two sessions: told apart by their folders.
        self.assertEqual(r.report_names([p("h100", "s20", "f.h5"), p("h100", "s22", "f.h5"),
                                         p("h200", "s13", "g.h5"), p("h200", "h.h5")], res),
                         ["h100_s20_f", "h100_s22_f", "g", "h"])

    def test_a_name_clash_exits_2_naming_both_files_and_writes_nothing(self):
        res = os.path.join(self.tmp, "results")
        out = os.path.join(self.tmp, "figures")
        for folder in ("a", "b"):  # a/same.h5 and b/a_same.h5 clash as a_same once qualified
            os.makedirs(os.path.join(res, folder))
        for path in (("a", "same.h5"), ("b", "same.h5"), ("b", "a_same.h5")):
            open(os.path.join(res, *path), "wb").close()  # not HDF5: kept for report.py
        proc = subprocess.run([sys.executable, os.path.join(ARGS.analysis_dir, "render_all.py"),
                               "--results", res, "--out", out], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("a_same", proc.stderr)
        self.assertIn(os.path.join("a", "same.h5"), proc.stderr)
        self.assertIn(os.path.join("b", "a_same.h5"), proc.stderr)
        self.assertFalse(os.path.exists(out))

    def test_cta_record_runs_are_skipped(self):
        res = os.path.join(self.tmp, "results")
        os.makedirs(os.path.join(res, "h100", "s", "ctas"))
        open(os.path.join(res, "h100", "s", "ctas", "run.h5"), "wb").close()
        proc = subprocess.run([sys.executable, os.path.join(ARGS.analysis_dir, "render_all.py"),
                               "--results", res, "--out", os.path.join(self.tmp, "figures")],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("no cisa-sim result files", proc.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--analysis-dir", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
