#!/usr/bin/env python3
"""The Python module cisa_sim (issue 13): load() and run() against the built binary.

    test_cisa_sim.py BINARY SOURCE_DIR
"""

import os
import subprocess
import sys
import tempfile
import unittest

BINARY, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "python"))
import cisa_sim  # noqa: E402


class CisaSimModule(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.h5 = os.path.join(cls.tmp.name, "x.h5")
        subprocess.run([BINARY, "--out", cls.h5, "--format", "none"], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_load_points(self):
        df = cisa_sim.load(self.h5)
        self.assertEqual(df.attrs["group"], "points")
        self.assertEqual(len(df), 10)  # the default scenario: 8 prefill + 2 decode points
        self.assertEqual(set(df["phase"]), {"terminal_prefill", "decode"})  # decoded strings
        self.assertEqual(df["qshare_g"].dtype.kind, "i")
        self.assertEqual(df.attrs["units"]["pred_ms_busy_cisa"], "ms")
        self.assertEqual(df.attrs["units"]["bytes_kv_dense"], "bytes")
        self.assertIn("dense", df.attrs["descriptions"]["pred_ms_busy_dense"])
        prov = df.attrs["provenance"]
        self.assertIsInstance(prov, dict)
        self.assertEqual(prov["scenario_name"], "ultra_tp2_1m")
        self.assertIn("git_hash", prov)
        # numbers as the binary wrote them (csv of the same run)
        csv = subprocess.run([BINARY, "--no-hdf5", "--format", "csv"], check=True, capture_output=True, text=True).stdout
        header, first = csv.splitlines()[0].split(","), csv.splitlines()[1].split(",")
        self.assertEqual(list(df.columns), header)  # every column, in the table's order
        col = header.index("pred_ms_busy_cisa")
        self.assertAlmostEqual(df["pred_ms_busy_cisa"].iloc[0], float(first[col]), places=6)

    def test_run_with_overrides(self):
        df = cisa_sim.run("ultra_tp2_1m", binary=BINARY, cisa__budget=1024, sweep={"G": [1, 4]})
        self.assertEqual(sorted(set(df["budget_chunks"])), [1024])
        self.assertEqual(sorted(set(df["qshare_g"])), [1, 4])
        self.assertIn("cisa.budget=1024", df.attrs["provenance"]["scenario_overrides"])

    def test_run_plan(self):
        df = cisa_sim.run("plan_llama70b_h200", plan=True, binary=BINARY, set={"search": {}})
        self.assertEqual(df.attrs["group"], "plan")
        self.assertEqual(df.attrs["units"]["tpot_ms_cisa"], "ms")
        self.assertTrue((df["tpot_ms_cisa"] > 0).all())

    def test_errors(self):
        with self.assertRaises(cisa_sim.CisaSimError) as cm:
            cisa_sim.run("no_such_scenario", binary=BINARY)
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertIn("closest shipped", str(cm.exception))
        with self.assertRaises(ValueError):
            empty = os.path.join(self.tmp.name, "empty.h5")
            import h5py
            h5py.File(empty, "w").close()
            cisa_sim.load(empty)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
