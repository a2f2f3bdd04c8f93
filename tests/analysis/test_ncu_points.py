#!/usr/bin/env python3
"""analysis/ncu_points.py without a GPU: re-parses the committed hand-made ncu outputs
(ncu_fixture/point_1.csv, point_8.csv) into a copy of a committed result file and checks every
column against sums worked out by hand; a fake `ncu` script stands in for Nsight Compute to
check the command, the environment, timeouts and failures.

    test_ncu_points.py [--analysis-dir DIR] [unittest args]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.environ.get("CISA_ANALYSIS_DIR", os.path.join(HERE, "..", "..", "analysis"))
FIXTURE_DIR = os.path.join(HERE, "ncu_fixture")
RESULT = os.path.join(HERE, "..", "..", "results", "h200", "measured", "nano_tp1_1m_measured.h5")
OTHER_RESULT = os.path.join(HERE, "..", "..", "results", "h200", "measured", "ultra_tp2_1m_measured.h5")

try:
    import h5py
    import numpy as np
except ImportError as e:
    sys.stderr.write(f"test_ncu_points.py: FAIL: {e} for {sys.executable}; install python3-numpy "
                     "python3-h5py (scripts/install-deps.sh) or set -DCISA_ANALYSIS_PYTHON\n")
    sys.exit(1)

COMPONENTS = ("attention_dense", "attention_cisa", "scoring", "topk")

# Sums of the fixture's launches, by hand (values in base units; sectors x 32 for L2).
EXPECTED = {
    1: {  # terminal_prefill, no split: attn | boundary | sum_iq score topk attn | boundary
        "attention_dense": (18.39e9, 134.22e6, 574.61e6 * 32),
        "scoring": (67.11e6 + 537.40e6, 1.05e6 + 67.11e6, (2_097_152 + 16.77e6) * 32),
        "topk": (69.21e6, 2.10e6, 2.16e6 * 32),
        "attention_cisa": (71.93e9, 134.22e6, 2.25e9 * 32),
    },
    8: {  # decode, split in 4: attn combine | boundary | sum_iq score topk attn combine | boundary
        "attention_dense": (17_180_917_760 + 2.39e6, 2.13e6 + 262.14e3, (536.90e6 + 74_752) * 32),
        "scoring": (264.19e3 + 536.12e6, 131.07e3 + 4.19e6, (8_256 + 16.75e6) * 32),
        "topk": (4.61e6, 524.29e3, 143_360 * 32),
        "attention_cisa": (571.21e6 + 2.39e6, 2.13e6 + 262.14e3, (17.85e6 + 74_752) * 32),
    },
}
# Fake predictions for rows 1 and 8 (other rows get 1e9); err = (read + write) / pred - 1.
PRED = {
    1: {"attention_dense": 18.40e9, "attention_cisa": 68.76e9, "scoring": 6.0e8, "topk": 8.0e7},
    8: {"attention_dense": 17.19e9, "attention_cisa": 5.75e8, "scoring": 5.40e8, "topk": 4.0e6},
}

BROKEN_CSV = textwrap.dedent('''\
    ==PROF== Connected to process 50001 (/x/cisa-measure)
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
    "0","50001","cisa-measure","127.0.0.1","attn_kernel(KParams)","1","13","(128, 1, 1)","(32, 2, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Gbyte","17.18"
    ''')

FAKE_NCU = '''\
#!{python}
# Stands in for Nsight Compute: checks the command line and environment ncu_points.py gives it,
# logs them, prints the fixture output for the point, copies a result file to --out.
import os, shutil, sys, time
a = sys.argv[1:]
if a == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2099.1.0.0 (fake)")
    sys.exit(0)
p = os.environ.get("CISA_MEASURE_ONLY", "")
with open(os.environ["FAKE_NCU_LOG"], "a") as f:
    f.write(p + " " + os.environ.get("CISA_MEASURE_PROFILE", "") + " " + " ".join(a) + "\\n")
def need(ok, what):
    if not ok:
        print("==ERROR== fake ncu: " + what)
        sys.exit(3)
need(p.isdigit() and os.environ.get("CISA_MEASURE_PROFILE") == "1", "env")
need(a[a.index("--cache-control") + 1] in ("all", "none"), "cache control")
need(a[a.index("--clock-control") + 1] == "none", "clock control")
need(a[a.index("--metrics") + 1] == "dram__bytes_read.sum,dram__bytes_write.sum,"
     "lts__t_sectors_srcunit_tex_op_read.sum", "metrics")
need("ncu_boundary_kernel" in a[a.index("-k") + 1] and "--csv" in a, "kernel filter")
if os.environ.get("FAKE_NCU_SLEEP") == p:
    time.sleep(60)
if os.environ.get("FAKE_NCU_FAIL") == p:
    sys.stderr.write("==ERROR== fake failure for point " + p + "\\n")
    sys.exit(1)
if os.environ.get("FAKE_NCU_OUT_SRC"):
    shutil.copyfile(os.environ["FAKE_NCU_OUT_SRC"], a[a.index("--out") + 1])
sys.stdout.write(open(os.path.join(os.environ["FAKE_NCU_FIXTURE"], "point_" + p + ".csv")).read())
'''


def run(*args, env=None):
    return subprocess.run([sys.executable, os.path.join(ANALYSIS, "ncu_points.py"), *args],
                          capture_output=True, text=True, env=env)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def columns(path):
    """(/points columns, {column: (unit, description)}, file attributes), strings decoded."""
    with h5py.File(path, "r") as f:
        g = f["points"]
        cols = {k: g[k][...] for k in g}
        meta = {k: (text(g[k].attrs.get("unit", "")), text(g[k].attrs.get("description", ""))) for k in g}
        return cols, meta, {k: text(v) for k, v in f.attrs.items()}


class NcuPointsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test_ncu_points-")
        self.h5 = os.path.join(self.tmp, "result.h5")
        shutil.copyfile(RESULT, self.h5)
        os.chmod(self.h5, 0o644)
        # Start from a file without predicted or counted byte columns (the committed results carry
        # them); tests add fake predictions where they need them.
        with h5py.File(self.h5, "r+") as f:
            self.n = f["points/point_index"].shape[0]
            for name in list(f["points"].keys()):
                if name.startswith(("pred_dram_", "ncu_", "err_bytes_")):
                    del f["points"][name]

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def add_pred(self):
        sys.path.insert(0, ANALYSIS)
        from h5_columns import add_columns
        cols = {}
        for c in COMPONENTS + ("setup", "other"):
            v = np.full(self.n, 1e9)
            for p in PRED:
                v[p] = PRED[p].get(c, 1e9)
            cols[f"pred_dram_bytes_{c}"] = (v, "bytes", "fake prediction for the test")
            cols[f"pred_dram_write_bytes_{c}"] = (v / 100, "bytes", "fake prediction for the test")
        add_columns(self.h5, cols)

    def assert_ok(self, proc, rc=0):
        self.assertEqual(proc.returncode, rc, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")

    def check_fixture_columns(self, points=(1, 8), with_err=True):
        cols, meta, attrs = columns(self.h5)
        for c in COMPONENTS:
            for i, key in enumerate(("dram_read", "dram_write", "l2_read")):
                name = f"ncu_{key}_bytes_{c}"
                self.assertEqual(meta[name][0], "bytes", name)
                self.assertIn("summed over the component's kernels, one launch of each, cache control all",
                              meta[name][1])
                for r in range(self.n):
                    if r in points:
                        self.assertAlmostEqual(cols[name][r], EXPECTED[r][c][i], delta=0.5, msg=f"{name}[{r}]")
                    else:
                        self.assertTrue(np.isnan(cols[name][r]), f"{name}[{r}] should be NaN")
            name = f"err_bytes_{c}"
            if not with_err:
                self.assertNotIn(name, cols)
                continue
            self.assertEqual(meta[name][0], "fraction")
            for r in range(self.n):
                if r in points:
                    want = (EXPECTED[r][c][0] + EXPECTED[r][c][1]) / PRED[r][c] - 1
                    self.assertAlmostEqual(cols[name][r], want, places=12, msg=f"{name}[{r}]")
                else:
                    self.assertTrue(np.isnan(cols[name][r]), f"{name}[{r}] should be NaN")
        self.assertNotIn("err_bytes_setup", cols)
        return cols, attrs

    # --- re-parsing saved outputs ------------------------------------------------------------

    def test_from_raw_columns(self):
        self.add_pred()
        before, _, _ = columns(self.h5)
        proc = run(self.h5, "--from-raw", FIXTURE_DIR)
        self.assert_ok(proc)
        cols, attrs = self.check_fixture_columns()
        for k, v in before.items():  # existing columns untouched
            np.testing.assert_array_equal(cols[k], v, err_msg=k)
        note = attrs["ncu_measurement"]
        for s in ("Version 2025.1.1.0", "--cache-control all", "points profiled: 1,8",
                  "2026-11-30T09:11:00Z", "setup"):
            self.assertIn(s, note)
        self.assertNotIn("failed", note)
        # The table has a row per point and component, the setup row says why it is empty,
        # and the verdict uses the 5% target.
        self.assertIn("host-to-device copy", proc.stdout)
        self.assertRegex(proc.stdout, r"attention_dense\s+2\s.*PASS")
        self.assertRegex(proc.stdout, r"attention_cisa\s+2\s.*PASS")  # +4.81% worst
        self.assertRegex(proc.stdout, r"scoring\s+2\s.*MISS: 1 of 2")  # +12.11% at point 1
        self.assertRegex(proc.stdout, r"topk\s+2\s.*no target")

    def test_no_pred_columns_no_err(self):
        proc = run(self.h5, "--from-raw", FIXTURE_DIR)
        self.assert_ok(proc)
        self.assertIn("no pred_dram_bytes", proc.stderr)
        self.check_fixture_columns(with_err=False)

    def test_points_subset(self):
        proc = run(self.h5, "--from-raw", FIXTURE_DIR, "--points", "8")
        self.assert_ok(proc)
        self.check_fixture_columns(points=(8,), with_err=False)

    def test_bad_input_exits_2_file_unchanged(self):
        self.add_pred()
        h = digest(self.h5)
        cases = [
            ("--from-raw", FIXTURE_DIR, "--points", "1,99"),  # not in the file
            ("--from-raw", FIXTURE_DIR, "--points", "one"),
            ("--from-raw", os.path.join(self.tmp, "no_such_dir")),
            ("--from-raw", FIXTURE_DIR, "--sample", "0"),
            ("--binary", os.path.join(self.tmp, "no_such_binary"), "--scenario", RESULT),
            ("--points", "1"),  # neither --binary nor --from-raw
        ]
        for extra in cases:
            proc = run(self.h5, *extra)
            self.assert_ok(proc, 2)
            self.assertIn("error:", proc.stderr)
            self.assertEqual(digest(self.h5), h, f"file changed by {extra}")
        proc = run(os.path.join(self.tmp, "missing.h5"), "--from-raw", FIXTURE_DIR)
        self.assert_ok(proc, 2)
        self.assertIn("no such file", proc.stderr)
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        self.assert_ok(run(self.h5, "--from-raw", empty), 2)
        self.assertEqual(digest(self.h5), h)

    def test_failed_point_others_written_exit_1(self):
        raw = os.path.join(self.tmp, "raw")
        shutil.copytree(FIXTURE_DIR, raw)
        with open(os.path.join(raw, "point_9.csv"), "w") as f:
            f.write(BROKEN_CSV)  # no boundary kernel: not profile mode
        self.add_pred()
        proc = run(self.h5, "--from-raw", raw)
        self.assert_ok(proc, 1)
        self.assertIn("no ncu_boundary_kernel", proc.stderr)
        _, attrs = self.check_fixture_columns()
        self.assertIn("failed: 9", attrs["ncu_measurement"])

    def test_every_point_failed_file_byte_identical(self):
        raw = os.path.join(self.tmp, "raw")
        os.mkdir(raw)
        with open(os.path.join(raw, "point_9.csv"), "w") as f:
            f.write(BROKEN_CSV)
        with open(os.path.join(raw, "point_3.csv"), "w") as f:
            f.write("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM\n")
        h = digest(self.h5)
        proc = run(self.h5, "--from-raw", raw)
        self.assert_ok(proc, 1)
        self.assertIn("no ncu CSV table", proc.stderr)
        self.assertEqual(digest(self.h5), h)

    # --- running a (fake) ncu ----------------------------------------------------------------

    def fake_tools(self, binary_name="cisa-measure"):
        ncu = os.path.join(self.tmp, "ncu")
        with open(ncu, "w") as f:
            f.write(FAKE_NCU.format(python=sys.executable))
        binary = os.path.join(self.tmp, binary_name)
        with open(binary, "w") as f:
            f.write("#!/bin/sh\nexit 99\n")  # never run: the fake ncu does not launch it
        for p in (ncu, binary):
            os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)
        env = dict(os.environ, FAKE_NCU_LOG=os.path.join(self.tmp, "ncu.log"), FAKE_NCU_FIXTURE=FIXTURE_DIR,
                   FAKE_NCU_OUT_SRC=self.h5 + ".orig")
        shutil.copyfile(self.h5, self.h5 + ".orig")
        return ncu, binary, env

    def log(self):
        with open(os.path.join(self.tmp, "ncu.log")) as f:
            return f.read().splitlines()

    def test_live_fake_ncu_keep_raw_then_from_raw(self):
        self.add_pred()
        ncu, binary, env = self.fake_tools()
        raw = os.path.join(self.tmp, "kept")
        proc = run(self.h5, "--binary", binary, "--scenario", RESULT, "--set", "workload.batch=16",
                   "--points", "8,1", "--ncu", ncu, "--keep-raw", raw, env=env)
        self.assert_ok(proc)
        self.assertIn("ETA", proc.stderr)
        self.check_fixture_columns()
        log = self.log()
        self.assertEqual([l.split()[:2] for l in log], [["1", "1"], ["8", "1"]])  # one process per point
        self.assertIn(f"--csv {binary} --scenario {RESULT} --set workload.batch=16 --out", log[0])
        self.assertNotIn("--measure", log[0])  # cisa-measure always measures
        self.assertIn("Version 2099.1.0.0 (fake)", columns(self.h5)[2]["ncu_measurement"])
        for p in (1, 8):
            for ext in (".csv", ".stderr.txt", ".meta.json"):
                self.assertTrue(os.path.isfile(os.path.join(raw, f"point_{p}{ext}")))
        # Re-parsing what was kept gives the same file contents.
        again = os.path.join(self.tmp, "again.h5")
        shutil.copyfile(self.h5 + ".orig", again)
        self.assert_ok(run(again, "--from-raw", raw))
        a, b = columns(self.h5)[0], columns(again)[0]
        for c in COMPONENTS:
            np.testing.assert_array_equal(a[f"ncu_dram_read_bytes_{c}"], b[f"ncu_dram_read_bytes_{c}"])

    def test_live_cisa_sim_gets_measure_on(self):
        ncu, binary, env = self.fake_tools("cisa-sim")
        proc = run(self.h5, "--binary", binary, "--scenario", RESULT, "--points", "1", "--ncu", ncu,
                   "--cache-control", "none", env=env)
        self.assert_ok(proc)
        self.assertIn("--cache-control none", self.log()[0])
        self.assertIn("--measure on --scenario", self.log()[0])
        _, meta, _ = columns(self.h5)
        self.assertIn("cache control none", meta["ncu_dram_read_bytes_scoring"][1])

    def test_live_failure_and_timeout_exit_1(self):
        ncu, binary, env = self.fake_tools()
        env.update(FAKE_NCU_FAIL="8", FAKE_NCU_SLEEP="9")
        proc = run(self.h5, "--binary", binary, "--scenario", RESULT, "--points", "1,8,9", "--ncu", ncu,
                   "--timeout", "2", env=env)
        self.assert_ok(proc, 1)
        self.assertIn("point 8: ncu exited 1: ==ERROR== fake failure", proc.stderr)
        self.assertIn("point 9: timed out after 2 s", proc.stderr)
        cols, _, attrs = columns(self.h5)
        self.assertAlmostEqual(cols["ncu_dram_read_bytes_topk"][1], EXPECTED[1]["topk"][0], delta=0.5)
        self.assertTrue(np.isnan(cols["ncu_dram_read_bytes_topk"][8]))
        self.assertIn("failed: 8 (ncu exited 1", attrs["ncu_measurement"])

    def test_live_wrong_scenario_detected(self):
        ncu, binary, env = self.fake_tools()
        env["FAKE_NCU_OUT_SRC"] = OTHER_RESULT  # the binary measured another model's point 1
        h = digest(self.h5)
        proc = run(self.h5, "--binary", binary, "--scenario", RESULT, "--points", "1", "--ncu", ncu, env=env)
        self.assert_ok(proc, 1)
        self.assertIn("differs from the file's row", proc.stderr)
        self.assertEqual(digest(self.h5), h)

    def test_live_missing_ncu_exit_2(self):
        _, binary, env = self.fake_tools()
        h = digest(self.h5)
        proc = run(self.h5, "--binary", binary, "--scenario", RESULT, "--points", "1",
                   "--ncu", os.path.join(self.tmp, "no_ncu"), env=env)
        self.assert_ok(proc, 2)
        self.assertIn("not found", proc.stderr)
        self.assertEqual(digest(self.h5), h)

    # --- pieces ------------------------------------------------------------------------------

    def test_units_and_sample(self):
        sys.path.insert(0, ANALYSIS)
        import ncu_points as m
        from h5_columns import read_points
        for value, unit, want in (("1,234,567", "byte", 1234567), ("2.5", "Kbyte", 2500),
                                  ("3", "Mbyte", 3e6), ("1.5", "Gbyte", 1.5e9), ("7", "KB", 7e3),
                                  ("7", "MB", 7e6), ("7", "GB", 7e9), ("12", "Ksector", 12e3)):
            self.assertAlmostEqual(m.to_base(value, unit), want, msg=f"{value} {unit}")
        with self.assertRaises(ValueError):
            m.to_base("1", "Kibyte")
        cols = read_points(self.h5)  # rows 0-7 terminal_prefill, 8-9 decode, all measured
        self.assertEqual(m.sample_points(cols, 3), [0, 7, 8])
        self.assertEqual(m.sample_points(cols, 4), [0, 4, 7, 8])
        for k in range(2, 12):
            pts = m.sample_points(cols, k)
            self.assertEqual(len(pts), min(k, 10))
            self.assertEqual({cols["phase"][p] for p in pts}, {"terminal_prefill", "decode"})
        cols["meas_ms_attention_cisa"][:] = np.nan
        with self.assertRaises(m.InputError):
            m.sample_points(cols, 3)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--analysis-dir" in args:
        i = args.index("--analysis-dir")
        ANALYSIS = args[i + 1]
        del args[i:i + 2]
    unittest.main(argv=[sys.argv[0]] + args, verbosity=2)
