#!/usr/bin/env python3
"""Checks analysis/measure_peers.py without a GPU: the --dry-run-timer path on copies of committed
measured result files (columns, units, ratios, NaN rows, shape deduplication, untouched original
columns, file attributes), and exit code 2 with the file left byte-identical on bad input, without
torch and without a GPU.

    test_peers.py [--analysis-dir DIR] [unittest args]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ANALYSIS = os.environ.get("CISA_ANALYSIS_DIR", os.path.join(REPO, "analysis"))
MEASURED = os.path.join(REPO, "results", "h200", "measured")
NANO = os.path.join(MEASURED, "nano_tp1_1m_measured.h5")  # terminal_prefill + decode, all measured
SCHEDULE = os.path.join(MEASURED, "budget_schedule_measured.h5")  # also unmeasured full_prefill rows

MISSING = []
for _mod in ("numpy", "h5py"):
    try:
        __import__(_mod)
    except ImportError:
        MISSING.append(_mod)
if MISSING:
    sys.stderr.write(f"test_peers.py: FAIL: Python module(s) {', '.join(MISSING)} missing for "
                     f"{sys.executable}; install them with scripts/install-deps.sh or configure "
                     "CMake with -DCISA_ANALYSIS_PYTHON=/path/to/python3 that has them.\n")
    sys.exit(1)

import h5py  # noqa: E402
import numpy as np  # noqa: E402

NEW = {"meas_ms_attention_dense_peer": "ms", "meas_speedup_attention_vs_peer": "x",
       "meas_speedup_busy_vs_peer": "x", "err_attention_dense_peer": "fraction"}
SHAPE = ["phase", "context_tokens", "batch", "q_heads", "kv_heads", "head_dim", "prefill_tokens"]


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def run(*args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, os.path.join(ANALYSIS, "measure_peers.py"), *args],
                          capture_output=True, text=True, env=env)


def snapshot(path):
    """Every /points column and its attributes, and the file attributes."""
    with h5py.File(path, "r") as f:
        cols = {}
        for name, ds in f["points"].items():
            data = ds.asstr()[...] if h5py.check_string_dtype(ds.dtype) else ds[...]
            cols[name] = (np.array(data), {k: text(v) for k, v in ds.attrs.items()})
        attrs = {k: text(v) for k, v in f.attrs.items()}
    return cols, attrs


def torch_with_cuda():
    """True where this interpreter has torch and it sees a CUDA GPU."""
    p = subprocess.run([sys.executable, "-c", "import sys, torch; "
                        "sys.exit(0 if torch.cuda.is_available() else 1)"], capture_output=True)
    return p.returncode == 0


class PeersTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="cisa_peers_test_")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def copy(self, src, name="result.h5"):
        self.assertTrue(os.path.isfile(src), f"committed file missing: {src}")
        dst = os.path.join(self.tmp, name)
        shutil.copyfile(src, dst)
        return dst

    def fake_torch(self, body):
        """A directory holding a stand-in `torch` package, for PYTHONPATH."""
        d = os.path.join(self.tmp, "fake_torch")
        os.makedirs(os.path.join(d, "torch"), exist_ok=True)
        with open(os.path.join(d, "torch", "__init__.py"), "w") as fh:
            fh.write(body)
        return {"PYTHONPATH": d + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def assert_exit2_unchanged(self, path, *args, expect=(), env_extra=None):
        before = read_bytes(path) if os.path.isfile(path) else None
        proc = run(*args, env_extra=env_extra)
        self.assertEqual(proc.returncode, 2, f"{args}: rc {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        for e in expect:
            self.assertIn(e, proc.stderr)
        if before is not None:
            self.assertEqual(read_bytes(path), before, f"{path} changed on exit 2")
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".tmp-")], [],
                         "temporary file left behind")
        return proc

    def check_dry_run(self, h5, const, rows_mode, repeats=False):
        before_cols, before_attrs = snapshot(h5)
        args = [h5, "--dry-run-timer", str(const)] + (["--rows", rows_mode] if rows_mode else [])
        proc = run(*args)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        after_cols, after_attrs = snapshot(h5)

        # the original columns and attributes are untouched
        for name, (data, attrs) in before_cols.items():
            if name in NEW:
                continue
            self.assertIn(name, after_cols)
            if data.dtype.kind in "fc":
                np.testing.assert_array_equal(after_cols[name][0], data, err_msg=name)
            else:
                self.assertEqual(after_cols[name][0].tolist(), data.tolist(), name)
            self.assertEqual(after_cols[name][1], attrs, name)
        for k, v in before_attrs.items():
            if k not in ("peer_measurement", "peer_forms"):
                self.assertEqual(after_attrs[k], v, k)

        # the four columns with units, a description that says it is a dry run
        for name, unit in NEW.items():
            self.assertIn(name, after_cols)
            self.assertEqual(after_cols[name][1]["unit"], unit, name)
            self.assertIn("description", after_cols[name][1])
        self.assertIn("dry run, not a measurement",
                      after_cols["meas_ms_attention_dense_peer"][1]["description"].lower())
        self.assertIn("dry run, not a measurement", after_attrs["peer_measurement"])
        self.assertIn("peer_forms", after_attrs)

        c = {k: v[0] for k, v in before_cols.items()}
        phase = c["phase"].astype(str)
        sel = np.isfinite(c["meas_ms_attention_dense"]) if rows_mode != "all" else np.ones(len(phase), bool)
        timed = sel & np.isin(phase, ["terminal_prefill", "decode"])
        peer = after_cols["meas_ms_attention_dense_peer"][0]
        self.assertTrue(timed.any())
        np.testing.assert_array_equal(peer[timed], const)
        self.assertTrue(np.isnan(peer[~timed]).all(), "rows not timed must be NaN")
        with np.errstate(divide="ignore", invalid="ignore"):
            expect = {"meas_speedup_attention_vs_peer": const / c["meas_ms_attention_cisa"],
                      "meas_speedup_busy_vs_peer": const / c["meas_ms_busy_cisa"],
                      "err_attention_dense_peer": np.where(c["dense_impl"].astype(str) == "cudnn",
                                                           const / c["pred_ms_attention_dense"] - 1, np.nan)}
        for name, want in expect.items():
            got = after_cols[name][0]
            np.testing.assert_allclose(got[timed], want[timed], rtol=1e-12, err_msg=name)
            self.assertTrue(np.isnan(got[~timed]).all(), name)

        # one timing per distinct dense shape (decode counts as P = 1 whatever the file says)
        keys = set()
        for i in np.flatnonzero(sel):
            p = 1 if phase[i] == "decode" else int(c["prefill_tokens"][i])
            keys.add((phase[i],) + tuple(int(c[k][i]) for k in SHAPE[1:-1]) + (p,))
        if repeats:
            self.assertLess(len(keys), int(sel.sum()), "this file should repeat shapes")
        self.assertIn(f"{len(keys)} distinct dense shapes for {int(sel.sum())} selected rows", proc.stdout)
        forms = after_attrs["peer_forms"].splitlines()
        self.assertEqual(len(forms), len(keys), after_attrs["peer_forms"])
        self.assertEqual(sum("->" in line for line in forms),
                         len({k for k in keys if k[0] in ("terminal_prefill", "decode")}))
        self.assertEqual(proc.stderr.count("] "), sum("->" in line for line in forms), "progress lines")
        return after_attrs, proc

    def test_dry_run_measured_rows(self):
        h5 = self.copy(NANO)
        with h5py.File(h5, "r+") as f:
            # unmeasure a prefill row: --rows measured must leave it NaN
            d = f["points/meas_ms_attention_dense"]
            v = d[...]
            v[0] = np.nan
            d[...] = v
            # decode rows may store 0 or 1 new positions: still one shape (rows 8, 9 are decode)
            d = f["points/prefill_tokens"]
            v = d[...]
            self.assertEqual(f["points/phase"].asstr()[len(v) - 1], "decode")
            v[len(v) - 1] = 0
            d[...] = v
        attrs, proc = self.check_dry_run(h5, 2.0, None, repeats=True)
        self.assertIn("gqa-folded non-causal", attrs["peer_forms"])
        self.assertIn("attention FLOPs over exact causal", attrs["peer_forms"])
        self.assertIn("| peer form |", proc.stdout)
        # a second run replaces the columns instead of failing
        self.check_dry_run(h5, 3.5, "measured", repeats=True)

    def test_dry_run_all_rows_not_timed_phases(self):
        h5 = self.copy(SCHEDULE)
        attrs, _ = self.check_dry_run(h5, 2.0, "all")
        self.assertIn("full_prefill", attrs["peer_forms"])
        self.assertIn("not timed", attrs["peer_forms"])

    def test_dry_run_does_not_import_torch(self):
        h5 = self.copy(NANO)
        env = self.fake_torch("import sys\nsys.stderr.write('torch was imported\\n')\nsys.exit(99)\n")
        proc = run(h5, "--dry-run-timer", "2.0", env_extra=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("torch was imported", proc.stderr)

    def test_bad_input_exits_2(self):
        missing = os.path.join(self.tmp, "missing.h5")
        self.assert_exit2_unchanged(missing, missing, "--dry-run-timer", "2", expect=[missing, "no such file"])
        self.assert_exit2_unchanged(missing, missing, expect=[missing, "no such file"])  # not a dry run either
        junk = os.path.join(self.tmp, "junk.h5")
        with open(junk, "w") as fh:
            fh.write("not hdf5\n")
        self.assert_exit2_unchanged(junk, junk, "--dry-run-timer", "2", expect=[junk, "not a readable HDF5"])
        nopoints = os.path.join(self.tmp, "nopoints.h5")
        with h5py.File(nopoints, "w") as f:
            f.create_group("plan")
        self.assert_exit2_unchanged(nopoints, nopoints, "--dry-run-timer", "2", expect=[nopoints, "/points"])
        for col in ("meas_ms_busy_cisa", "pred_ms_attention_dense", "kv_heads"):
            h5 = self.copy(NANO, f"no_{col}.h5")
            with h5py.File(h5, "r+") as f:
                del f["points"][col]
            self.assert_exit2_unchanged(h5, h5, "--dry-run-timer", "2", expect=[h5, f"'{col}'"])

    def test_no_torch_exits_2(self):
        h5 = self.copy(NANO)
        env = self.fake_torch("raise ImportError('no torch in this test')\n")
        self.assert_exit2_unchanged(h5, h5, expect=["PyTorch is not importable"], env_extra=env)

    def test_torch_without_gpu_exits_2(self):
        h5 = self.copy(NANO)
        env = self.fake_torch("__version__ = '0.0-fake'\n\n\nclass cuda:\n"
                              "    @staticmethod\n    def is_available():\n        return False\n")
        self.assert_exit2_unchanged(h5, h5, expect=["no CUDA GPU"], env_extra=env)

    def test_no_gpu_here_exits_2(self):
        if torch_with_cuda():
            self.skipTest("torch with a CUDA GPU is available here: a real run would measure")
        h5 = self.copy(NANO)
        proc = self.assert_exit2_unchanged(h5, h5)
        self.assertRegex(proc.stderr, "PyTorch is not importable|no CUDA GPU")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--analysis-dir" in args:
        i = args.index("--analysis-dir")
        ANALYSIS = args[i + 1]
        del args[i:i + 2]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2)
