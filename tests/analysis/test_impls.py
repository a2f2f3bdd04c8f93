#!/usr/bin/env python3
"""Checks analysis/measure_impls.py without a GPU: the --dry-run-timer path on copies of a
committed measured result file (the three columns, units, NaN rows, one timing per shape, the
Flex rows a 16-row tile cannot express, untouched original columns, file attributes, --impls
subsets keeping earlier columns), and exit code 2 with the file left byte-identical on bad input,
without torch and without a GPU.

    test_impls.py [--analysis-dir DIR] [unittest args]
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
INKLING = os.path.join(MEASURED, "inkling_tp8_1m_measured.h5")  # prefill G 1/4/16/32 + decode, r = 4
SCHEDULE = os.path.join(MEASURED, "budget_schedule_measured.h5")  # also unmeasured full_prefill rows

MISSING = []
for _mod in ("numpy", "h5py"):
    try:
        __import__(_mod)
    except ImportError:
        MISSING.append(_mod)
if MISSING:
    sys.stderr.write(f"test_impls.py: FAIL: Python module(s) {', '.join(MISSING)} missing for "
                     f"{sys.executable}; install them with scripts/install-deps.sh or configure "
                     "CMake with -DCISA_ANALYSIS_PYTHON=/path/to/python3 that has them.\n")
    sys.exit(1)

import h5py  # noqa: E402
import numpy as np  # noqa: E402

COLUMNS = {"cudnn": "meas_ms_attention_dense_cudnn", "fa2": "meas_ms_attention_dense_fa2",
           "flex": "meas_ms_attention_cisa_flex"}


def text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def run(*args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, os.path.join(ANALYSIS, "measure_impls.py"), *args],
                          capture_output=True, text=True, env=env)


def snapshot(path):
    with h5py.File(path, "r") as f:
        cols = {}
        for name, ds in f["points"].items():
            data = ds.asstr()[...] if h5py.check_string_dtype(ds.dtype) else ds[...]
            cols[name] = (np.array(data), {k: text(v) for k, v in ds.attrs.items()})
        attrs = {k: text(v) for k, v in f.attrs.items()}
    return cols, attrs


class ImplsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="cisa_impls_test_")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def copy(self, src, name="result.h5"):
        self.assertTrue(os.path.isfile(src), f"committed file missing: {src}")
        dst = os.path.join(self.tmp, name)
        shutil.copyfile(src, dst)
        return dst

    def fake_torch(self, body):
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

    def test_dry_run_all_impls(self):
        h5 = self.copy(INKLING)
        with h5py.File(h5, "r+") as f:  # unmeasure one prefill row: --rows measured leaves it NaN
            d = f["points/meas_ms_attention_dense"]
            v = d[...]
            v[1] = np.nan
            d[...] = v
        before, before_attrs = snapshot(h5)
        proc = run(h5, "--dry-run-timer", "2.5")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        after, attrs = snapshot(h5)
        for name, (data, a) in before.items():  # original columns untouched
            if data.dtype.kind in "fc":
                np.testing.assert_array_equal(after[name][0], data, err_msg=name)
            else:
                self.assertEqual(after[name][0].tolist(), data.tolist(), name)
            self.assertEqual(after[name][1], a, name)
        for k, v in before_attrs.items():
            self.assertEqual(attrs[k], v, k)
        c = {k: v[0] for k, v in before.items()}
        phase = c["phase"].astype(str)
        sel = np.isfinite(c["meas_ms_attention_dense"])
        self.assertFalse(sel[1])
        for impl, col in COLUMNS.items():
            self.assertIn(col, after)
            self.assertEqual(after[col][1]["unit"], "ms")
            self.assertIn("dry run, not a measurement", after[col][1]["description"].lower())
            self.assertIn(f"impl_forms_{impl}", attrs)
            self.assertIn(f"{impl}: dry run, not a measurement", attrs["impl_measurement"])
        # dense: every selected row timed, the unselected one NaN
        for impl in ("cudnn", "fa2"):
            got = after[COLUMNS[impl]][0]
            np.testing.assert_array_equal(got[sel], 2.5)
            self.assertTrue(np.isnan(got[~sel]).all())
        # flex: G = 1 prefill rows have 4 rows per QShare group (r = 4): no 16-row tile, NaN
        flex = after[COLUMNS["flex"]][0]
        g1 = (phase == "terminal_prefill") & (c["qshare_g"] == 1)
        self.assertTrue(g1.any() and (sel & ~g1).any())
        np.testing.assert_array_equal(flex[sel & ~g1], 2.5)
        self.assertTrue(np.isnan(flex[g1 | ~sel]).all())
        self.assertIn("neither G*r nor G is a multiple of 16", attrs["impl_forms_flex"])
        # one timing per shape: 2 dense shapes (prefill, decode); flex keys add K, W, G
        self.assertIn("cudnn: 2 of 2 shapes timed", proc.stdout)
        n_flex = len({(phase[i], int(c["budget_chunks"][i]), int(c["qshare_g"][i]))
                      for i in np.flatnonzero(sel)})
        self.assertEqual(len(attrs["impl_forms_flex"].splitlines()), n_flex)
        n_g1 = len({int(c["budget_chunks"][i]) for i in np.flatnonzero(sel & g1)})
        self.assertEqual(proc.stderr.count("[flex "), n_flex - n_g1, "progress lines")

    def test_subset_keeps_other_columns_and_provenance(self):
        h5 = self.copy(INKLING)
        self.assertEqual(run(h5, "--dry-run-timer", "2", "--impls", "cudnn").returncode, 0)
        proc = run(h5, "--dry-run-timer", "3", "--impls", "fa2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        cols, attrs = snapshot(h5)
        self.assertEqual(float(np.nanmax(cols[COLUMNS["cudnn"]][0])), 2.0)
        self.assertEqual(float(np.nanmax(cols[COLUMNS["fa2"]][0])), 3.0)
        self.assertNotIn(COLUMNS["flex"], cols)
        lines = attrs["impl_measurement"].splitlines()
        self.assertEqual(sorted(ln.split(":")[0] for ln in lines), ["cudnn", "fa2"])

    def test_dry_run_not_timed_phases_all_rows(self):
        h5 = self.copy(SCHEDULE)
        proc = run(h5, "--dry-run-timer", "1", "--rows", "all")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        cols, attrs = snapshot(h5)
        phase = cols["phase"][0].astype(str)
        full = phase == "full_prefill"
        self.assertTrue(full.any())
        for impl, col in COLUMNS.items():
            self.assertTrue(np.isnan(cols[col][0][full]).all(), col)
            self.assertIn("full_prefill", attrs[f"impl_forms_{impl}"])

    def test_add_columns_replaces_then_adds_attributes(self):
        # Regression (session 6): editing in place, replacing a file attribute and then creating a
        # longer new one made HDF5 1.10 fail at close ("Pinned entry count not decreasing",
        # segfault) on this committed file after two columns had been added. The writer now builds
        # a new file; every column, unit and attribute must survive, the replaced one updated.
        sys.path.insert(0, ANALYSIS)
        import h5_columns  # noqa: E402
        h5 = self.copy(SCHEDULE)
        before, attrs_before = snapshot(h5)
        n = len(before["phase"][0])
        for k, name in enumerate(("meas_a", "meas_b")):
            h5_columns.add_columns(h5, {name: (np.full(n, k + 1.0), "ms", "test")},
                                   {"impl_forms_" + name: "f" * 1702, "impl_measurement": "m" * (300 + k)})
        code = ("import sys; sys.path.insert(0, %r); import h5_columns, numpy as np; "
                "h5_columns.add_columns(%r, {'meas_c': (np.zeros(%d), 'ms', 'test')}, "
                "{'impl_measurement': 'y' * 460, 'impl_forms_flex': 'x' * 1702})") % (ANALYSIS, h5, n)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        cols, attrs = snapshot(h5)
        for name, (values, col_attrs) in before.items():
            self.assertIn(name, cols)
            self.assertEqual(cols[name][1], col_attrs, name)
            if values.dtype.kind == "f":
                np.testing.assert_array_equal(cols[name][0], values)
        self.assertEqual(float(cols["meas_b"][0][0]), 2.0)
        self.assertEqual(cols["meas_c"][1]["unit"], "ms")
        self.assertEqual(attrs["impl_measurement"], "y" * 460)
        self.assertEqual(attrs["impl_forms_flex"], "x" * 1702)
        for k, v in attrs_before.items():
            if not k.startswith("impl_"):
                self.assertEqual(attrs[k], v, k)
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith(".tmp-")], [])

    def test_dry_run_does_not_import_torch(self):
        h5 = self.copy(INKLING)
        env = self.fake_torch("import sys\nsys.stderr.write('torch was imported\\n')\nsys.exit(99)\n")
        proc = run(h5, "--dry-run-timer", "2.0", env_extra=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("torch was imported", proc.stderr)

    def test_bad_input_exits_2(self):
        missing = os.path.join(self.tmp, "missing.h5")
        self.assert_exit2_unchanged(missing, missing, "--dry-run-timer", "2", expect=[missing, "no such file"])
        junk = os.path.join(self.tmp, "junk.h5")
        with open(junk, "w") as fh:
            fh.write("not hdf5\n")
        self.assert_exit2_unchanged(junk, junk, "--dry-run-timer", "2", expect=[junk, "not a readable HDF5"])
        h5 = self.copy(INKLING)
        self.assert_exit2_unchanged(h5, h5, "--impls", "cudnn,flash", expect=["--impls", "flash"])
        self.assert_exit2_unchanged(h5, h5, "--impls", "fa2,fa2", expect=["--impls"])
        self.assert_exit2_unchanged(h5, h5, "--reps", "0", expect=["--reps"])
        self.assert_exit2_unchanged(h5, h5, "--dry-run-timer", "-1", expect=["--dry-run-timer"])
        for col, impls in (("qshare_g", "flex"), ("kv_heads", "cudnn"), ("meas_ms_attention_dense", "fa2")):
            h5 = self.copy(INKLING, f"no_{col}.h5")
            with h5py.File(h5, "r+") as f:
                del f["points"][col]
            self.assert_exit2_unchanged(h5, h5, "--dry-run-timer", "2", "--impls", impls,
                                        expect=[h5, f"'{col}'"])
        # a dense-only run does not need the selection columns
        h5 = self.copy(INKLING, "dense_only.h5")
        with h5py.File(h5, "r+") as f:
            del f["points"]["qshare_g"]
        self.assertEqual(run(h5, "--dry-run-timer", "2", "--impls", "cudnn,fa2").returncode, 0)

    def test_no_torch_exits_2(self):
        h5 = self.copy(INKLING)
        env = self.fake_torch("raise ImportError('no torch in this test')\n")
        for impls in ("cudnn", "flex"):
            self.assert_exit2_unchanged(h5, h5, "--impls", impls, expect=["PyTorch is not importable"],
                                        env_extra=env)

    def test_torch_without_gpu_exits_2(self):
        h5 = self.copy(INKLING)
        env = self.fake_torch("__version__ = '0.0-fake'\n\n\nclass cuda:\n"
                              "    @staticmethod\n    def is_available():\n        return False\n")
        for impls in ("fa2", "flex"):
            self.assert_exit2_unchanged(h5, h5, "--impls", impls, expect=["no CUDA GPU"], env_extra=env)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--analysis-dir" in args:
        i = args.index("--analysis-dir")
        ANALYSIS = args[i + 1]
        del args[i:i + 2]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2)
