#!/usr/bin/env python3
"""analysis/fidelity.py and analysis/impl_predictions.py: like-for-like errors and band coverage.

    test_fidelity.py --analysis-dir DIR --binary CISA_SIM [unittest args]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

ARGS = None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_points(path, cols):
    with h5py.File(path, "w") as f:
        g = f.create_group("points")
        for name, values in cols.items():
            if isinstance(values[0], str):
                ds = g.create_dataset(name, data=np.array(values, dtype=h5py.string_dtype()))
            else:
                ds = g.create_dataset(name, data=np.asarray(values, dtype=float))
            ds.attrs["unit"] = "ms"
            ds.attrs["description"] = name


class FidelityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cisa_fidelity_test_")
        sys.path.insert(0, ARGS.analysis_dir)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_tool(self, *args):
        return subprocess.run([sys.executable, os.path.join(ARGS.analysis_dir, args[0]), *args[1:]],
                              capture_output=True, text=True)

    def test_median_and_band_coverage(self):
        import fidelity
        self.assertEqual(fidelity.median([1, 2, 3, 10]), 2.5)  # even count: the middle pair's mean
        self.assertEqual(fidelity.median([5, 1, 3]), 3)
        h5 = os.path.join(self.tmp, "r.h5")
        # four decode points of this project's kernels: errors 0, +10 %, -20 %, +4 %; bands +-5 %
        pred = np.array([1.0, 2.0, 3.0, 4.0])
        meas = pred * np.array([1.0, 1.1, 0.8, 1.04])
        write_points(h5, {"phase": ["decode"] * 4, "cisa_impl": ["cisa_kernels"] * 3 + ["flex"],
                          "meas_ms_attention_cisa": meas, "pred_ms_attention_cisa": pred,
                          "pred_ms_attention_cisa_lo": pred / 1.05, "pred_ms_attention_cisa_hi": pred * 1.05})
        s = fidelity.summarize([h5])[("meas_ms_attention_cisa", "decode")]
        self.assertEqual(len(s["err"]), 3)  # the flex row is not this project's kernel
        np.testing.assert_allclose(sorted(s["err"]), [0.0, 0.1, 0.2])
        # in [lo/1.05, hi*1.05] = [0.907, 1.1025] x pred: 0 % and +10 % in, -20 % out
        self.assertEqual(sum(s["in"]), 2)
        out = self.run_tool("fidelity.py", "--set", f"held=" + h5)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("10.0 %", out.stdout)  # median of 0, 10, 20
        self.assertIn("3 pairs, 67 % in band", out.stdout)  # the uncertainty target's own count
        bad = self.run_tool("fidelity.py", "--set", "x=" + os.path.join(self.tmp, "nope.h5"))
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no such file", bad.stderr)

    def test_each_peer_is_compared_with_its_own_profile(self):
        h5 = os.path.join(self.tmp, "run.h5")
        scen = os.path.join(ROOT, "scenarios", "inkling_tp8_1m.yaml")
        out = subprocess.run([ARGS.binary, "--scenario", scen, "--out", h5, "--format", "none"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        from h5_columns import add_columns, read_points
        cols = read_points(h5)
        n = len(cols["point_index"])
        add_columns(h5, {"meas_ms_attention_dense_fa2": (np.full(n, 50.0), "ms", "test"),
                         "meas_ms_attention_dense_peer": (np.full(n, 30.0), "ms", "test")})
        r = self.run_tool("impl_predictions.py", h5, "--binary", ARGS.binary, "--scenario", scen)
        self.assertEqual(r.returncode, 0, r.stderr)
        after = read_points(h5)
        for name in ("pred_ms_attention_dense_fa2", "pred_ms_attention_dense_cudnn",
                     "pred_ms_attention_dense_fa2_lo", "err_attention_dense_fa2", "err_attention_dense_peer"):
            self.assertIn(name, after)
        # fa2 (334 TF/s) is slower than cuDNN (591) in compute-bound prefill
        pre = after["phase"] == "terminal_prefill"
        self.assertTrue((after["pred_ms_attention_dense_fa2"][pre] > after["pred_ms_attention_dense_cudnn"][pre]).all())
        np.testing.assert_allclose(after["err_attention_dense_fa2"], 50.0 / after["pred_ms_attention_dense_fa2"] - 1)
        bad = self.run_tool("impl_predictions.py", h5, "--binary", ARGS.binary, "--scenario",
                            os.path.join(ROOT, "scenarios", "ultra_tp2_sweep.yaml"))
        self.assertEqual(bad.returncode, 2)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--analysis-dir", required=True)
    ap.add_argument("--binary", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
