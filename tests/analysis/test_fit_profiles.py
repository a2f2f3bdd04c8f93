#!/usr/bin/env python3
"""analysis/fit_profiles.py inverts the roofline the model prices: Flex times set to the model's own
predictions give back the flex profile's page-visit figures, at a shape of two CTAs per SM (64K,
B 8: 256 CTAs), of one per SM (1M, B 4: 128 lone CTAs, the middle of the lone-CTA band) and of 32
rows (impl_fit_flex).

    test_fit_profiles.py --analysis-dir DIR --binary CISA_SIM [unittest args]
"""
import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

ARGS = None
SCENARIO = """name: t_fit
model: qwen2_5_72b
tp: 8
hardware: h200_sxm
basis: calibrated
cisa: {chunk: 16, window: 128, budget: 2048, G: 16}
workload: {phase: terminal_prefill, context: 65536, batch: 8, prefill_tokens: 512}
sweep:
  zip: {context: [65536, 1048576, 65536], batch: [8, 4, 8], budget: [2048, 4096, 2048], G: [16, 16, 4]}
"""
# The flex profile's H200 figures (models/impl/flex.yaml): m128 MEAS, m32 XFER.
EXPECTED = {0: ("m128", 453.8), 1: ("m128", 453.8), 2: ("m32", 766.4)}


class FitProfilesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cisa_fit_test_")
        self.scenario = os.path.join(self.tmp, "t_fit.yaml")
        with open(self.scenario, "w") as f:
            f.write(SCENARIO)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def predicted_flex_ms(self):
        out = subprocess.run([ARGS.binary, "--scenario", self.scenario, "--no-hdf5", "--format", "csv",
                              "--set", "implementation.cisa=flex"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        return {int(r["point_index"]): float(r["pred_ms_attention_cisa"]) for r in csv.DictReader(io.StringIO(out.stdout))}

    def run_fit(self, path):
        cmd = [sys.executable, os.path.join(ARGS.analysis_dir, "fit_profiles.py"), path, "--binary", ARGS.binary,
               "--scenario", self.scenario]
        return subprocess.run(cmd, capture_output=True, text=True)

    def test_round_trip_of_the_model_own_times(self):
        pred = self.predicted_flex_ms()
        path = os.path.join(self.tmp, "fit.h5")
        with h5py.File(path, "w") as f:
            g = f.create_group("points")
            g.create_dataset("point_index", data=np.array(sorted(pred), dtype=np.int64))
            g.create_dataset("meas_ms_attention_cisa_flex", data=np.array([pred[i] for i in sorted(pred)]))
        out = self.run_fit(path)
        self.assertEqual(out.returncode, 0, out.stderr)
        got = re.findall(r"page_visit_ns (m\d+): \{value: ([0-9.]+)", out.stdout)
        self.assertEqual(len(got), 3, out.stdout)
        for i, (cls, value) in enumerate(got):
            want_cls, want = EXPECTED[i]
            self.assertEqual(cls, want_cls)
            self.assertAlmostEqual(float(value) / want, 1.0, delta=0.01, msg=out.stdout)

    def test_missing_file_is_refused(self):
        out = self.run_fit(os.path.join(self.tmp, "nonesuch.h5"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("no such file", out.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--analysis-dir", required=True)
    ap.add_argument("--binary", required=True)
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
