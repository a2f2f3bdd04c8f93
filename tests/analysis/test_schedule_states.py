#!/usr/bin/env python3
"""analysis/schedule_states.py on a hand-made measured file (one 64-row CISA prefill point).

    test_schedule_states.py --analysis-dir DIR --binary CISA_SIM [unittest args]
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
SCENARIO = """name: t_schedule
model: qwen2_5_72b
tp: 1
geometry: {q_heads: 16, kv_heads: 1}
hardware: h100_sxm
basis: calibrated
cisa: {chunk: 16, window: 128, budget: 1856, G: 3}
workload: {phase: terminal_prefill, context: 950272, batch: 2, prefill_tokens: 512}
"""


class ScheduleStatesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cisa_schedule_test_")
        self.file = os.path.join(self.tmp, "t_measured.h5")
        with h5py.File(self.file, "w") as f:
            f.attrs["scenario_effective_yaml"] = SCENARIO
            g = f.create_group("points")
            g.create_dataset("point_index", data=np.array([0], dtype=np.int64))
            g.create_dataset("phase", data=np.array(["terminal_prefill"], dtype=h5py.string_dtype()))
            g.create_dataset("meas_ms_attention_cisa", data=np.array([2.5]))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_tool(self, *args):
        cmd = [sys.executable, os.path.join(ARGS.analysis_dir, "schedule_states.py"), *args,
               "--binary", ARGS.binary, "--profile", os.path.join(ARGS.analysis_dir, "..", "models", "impl",
                                                                   "cisa_kernels.yaml")]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.join(ARGS.analysis_dir, ".."))

    def test_each_schedule_prices_the_point(self):
        out = self.run_tool(self.file)
        self.assertEqual(out.returncode, 0, out.stderr)
        row = [l for l in out.stdout.splitlines() if l.startswith("| t |")]
        self.assertEqual(len(row), 1, out.stdout)
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        self.assertEqual(cells[2], "64")  # 16 heads x G 3 = 48 rows: a 64-row tile
        shipped, staggered, convoy = (float(c.rstrip("%")) for c in cells[4:7])
        # The convoy reads fewer bytes than the staggered estimate (a faster or equal point); the
        # shipped profile prices 64-row launches between the two.
        self.assertGreaterEqual(convoy, shipped)
        self.assertGreaterEqual(shipped, staggered)
        self.assertGreater(convoy, staggered)
        ratio_staggered, ratio_convoy = float(cells[7]), float(cells[8])
        self.assertGreater(ratio_staggered, ratio_convoy)
        self.assertIn("| 64 | 1 |", out.stdout)

    def test_missing_file_is_refused(self):
        out = self.run_tool(os.path.join(self.tmp, "nonesuch.h5"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("no such file", out.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--analysis-dir", required=True)
    ap.add_argument("--binary", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
