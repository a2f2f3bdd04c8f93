#!/usr/bin/env python3
"""analysis/ncu_page_reads.py, attn_cta_progress.py and l2_trace_sim.py on hand-made inputs.

    test_l2_sharing_tools.py --analysis-dir DIR [--l2-reuse BIN] [unittest args]
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


def write_points(path, cols):
    with h5py.File(path, "w") as f:
        g = f.create_group("points")
        for name, values in cols.items():
            if isinstance(values[0], str):
                g.create_dataset(name, data=np.array(values, dtype=h5py.string_dtype()))
            else:
                g.create_dataset(name, data=np.asarray(values, dtype=float if name != "point_index" else np.int64))


def write_ctas(path, rows):
    with open(path, "w") as f:
        f.write("cta,sm,work,tiles,start_ns,q1_ns,q2_ns,q3_ns,end_ns\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


class ToolsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cisa_l2_tools_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_tool(self, *args):
        return subprocess.run([sys.executable, os.path.join(ARGS.analysis_dir, args[0]), *args[1:]],
                              capture_output=True, text=True)

    def test_page_reads(self):
        h5 = os.path.join(self.tmp, "m_measured.h5")
        # two sequences x one KV head, 10 selections each of K = 100 from N_e = 1,000 (window 24 of
        # eligible 1,024): a page is 16 x 2 x 128 x 2 = 8,192 B; 3 reads per page counted
        page = 16 * 2 * 128 * 2
        ncu = 3.0 * 2 * 1000 * page
        write_points(h5, {"phase": ["terminal_prefill", "decode"], "context_tokens": [16384, 16384],
                          "batch": [2, 2], "prefill_tokens": [40, 1], "budget_chunks": [100, 100],
                          "qshare_g": [4, 1], "kv_heads": [1, 1], "q_heads": [4, 4], "head_dim": [128, 128],
                          "window_pages": [24, 24], "tile_rows_cisa": [16, 16], "selections": [20, 2],
                          "eligible_chunks_mean": [1024, 1024], "chunk_tokens": [16, 16],
                          "pred_dram_bytes_attention_cisa": [2 * ncu, 1.0],
                          "ncu_dram_read_bytes_attention_cisa": [ncu, np.nan]})
        sys.path.insert(0, ARGS.analysis_dir)
        import ncu_page_reads
        rows = ncu_page_reads.rows_of(h5)
        self.assertEqual(len(rows), 1)  # the decode row has no ncu count
        r = rows[0]
        self.assertAlmostEqual(r["reads"], 3.0)
        self.assertAlmostEqual(r["picks"], 10 * 100 / 1000)
        self.assertAlmostEqual(r["l2_share"], 1.0 - 3.0 / 1.0)
        self.assertAlmostEqual(r["model_gb"] / r["ncu_gb"], 2.0)
        out = self.run_tool("ncu_page_reads.py", h5, "--markdown")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("model / ncu median 2.00", out.stdout)
        bad = self.run_tool("ncu_page_reads.py", os.path.join(self.tmp, "missing.h5"))
        self.assertEqual(bad.returncode, 2)

    def test_cta_progress_lockstep_and_spread(self):
        d = os.path.join(self.tmp, "ctas")
        os.makedirs(d)
        h5 = os.path.join(self.tmp, "run.h5")
        write_points(h5, {"point_index": [3, 5], "batch": [1, 1], "kv_heads": [2, 2],
                          "meas_ms_attention_cisa": [1.0, 1.0]})
        rng = np.random.default_rng(7)
        # point 3: 16 works of 2 streams, all starting together, every CTA at the same rate
        rows = [(i, i % 8, i, 40, 0, 250, 500, 750, 1000) for i in range(16)]
        write_ctas(os.path.join(d, "point_3_attn_ctas.csv"), rows)
        # point 5: the same, rates spread by 20 % (lognormal), so marks spread in proportion
        rows = []
        for i in range(16):
            s = float(np.exp(rng.normal(0, 0.2)))
            rows.append((i, i % 8, i, 40, 0, int(250 * s), int(500 * s), int(750 * s), int(1000 * s)))
        write_ctas(os.path.join(d, "point_5_attn_ctas.csv"), rows)
        sys.path.insert(0, ARGS.analysis_dir)
        import attn_cta_progress as a
        axes = a.point_axes(h5)
        r3 = a.summarize(os.path.join(d, "point_3_attn_ctas.csv"), axes)
        r5 = a.summarize(os.path.join(d, "point_5_attn_ctas.csv"), axes)
        self.assertEqual((r3["ctas"], r3["streams"], r3["waves"], r3["groups"]), (16, 2, 1, 2))
        self.assertEqual(r3["spread_q2"], 0.0)
        self.assertGreater(r5["spread_q2"], 0.08)
        self.assertAlmostEqual(r5["spread_q2"], r5["spread_end"], delta=0.01)
        # lockstep: all 8 CTAs of a stream start together, so each has the later ones as partners
        self.assertEqual(r3["lockstep_share"], 1.0)
        self.assertEqual(r3["offset_median"], 0.0)
        self.assertAlmostEqual(r3["coresident"], 3.5)  # 7 + 6 + ... + 0 partners over 8 CTAs
        # point 7: one stream, CTAs of 1,000 ns starting every 250 ns: each overlaps the next three
        # (offsets 0.25, 0.5, 0.75 durations), none in step
        rows = [(i, i % 8, i, 40, 250 * i, 250 * i + 250, 250 * i + 500, 250 * i + 750, 250 * i + 1000)
                for i in range(12)]
        write_ctas(os.path.join(d, "point_7_attn_ctas.csv"), rows)
        write_points(h5, {"point_index": [3, 5, 7], "batch": [1, 1, 1], "kv_heads": [2, 2, 1],
                          "meas_ms_attention_cisa": [1.0, 1.0, 1.0]})
        r7 = a.summarize(os.path.join(d, "point_7_attn_ctas.csv"), a.point_axes(h5))
        self.assertEqual(r7["lockstep_share"], 0.0)
        self.assertAlmostEqual(r7["offset_median"], 0.5)
        self.assertAlmostEqual(r7["coresident"], (9 * 3 + 2 + 1 + 0) / 12)
        out = self.run_tool("attn_cta_progress.py", d, h5)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(len(out.stdout.strip().splitlines()), 4)
        bad = self.run_tool("attn_cta_progress.py", self.tmp, h5)  # no CSV there
        self.assertEqual(bad.returncode, 2)

    def test_trace_sim(self):
        if not ARGS.l2_reuse:
            self.skipTest("no --l2-reuse binary given")
        d = os.path.join(self.tmp, "ctas")
        os.makedirs(d)
        h5 = os.path.join(self.tmp, "run.h5")
        # one stream, two QShare groups of one position (t0 = 1,998 and 1,999: N_e = 124 - 1 = 123),
        # K = 2, W = 1: each list is 2 random pages, the window page 123 and the tail page 124, one
        # KV tile of 4 pages; page = 16 x 2 x 128 x 2 = 8,192 B, so ncu = 8,192 B makes the ratio
        # the simulated misses
        page = 16 * 2 * 128 * 2
        cols = {"phase": ["terminal_prefill", "decode"], "context_tokens": [2000, 2000], "batch": [1, 1],
                "prefill_tokens": [2, 1], "budget_chunks": [2, 2], "qshare_g": [1, 1], "kv_heads": [1, 1],
                "q_heads": [4, 4], "head_dim": [128, 128], "window_pages": [1, 1], "tile_rows_cisa": [16, 16],
                "chunk_tokens": [16, 16], "eligible_chunks_mean": [124, 124],
                "ncu_dram_read_bytes_attention_cisa": [page, np.nan]}
        write_points(h5, cols)
        # both CTAs start together: they read the window and tail pages at the same instants, so a
        # one-line cache serves the second reader of each (6 misses of 8 reads); an ample cache
        # misses each distinct page once (4 to 6: the two selections may share pages)
        write_ctas(os.path.join(d, "point_0_attn_ctas.csv"),
                   [(0, 0, 0, 1, 0, 250, 500, 750, 1000), (1, 1, 1, 1, 0, 250, 500, 750, 1000)])
        for policy in ("lru", "random"):
            out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                                "--capacity-mb", f"{page / 1e6},1000", "--policy", policy)
            self.assertEqual(out.returncode, 0, out.stderr)
            row = [l for l in out.stdout.splitlines() if l.strip().startswith("0 ")][0].split()
            self.assertEqual(row[:3], ["0", "2", "0.0"])
            self.assertEqual(float(row[5]), 6.0)
            self.assertIn(float(row[6]), (4.0, 5.0, 6.0))
        # the dispatched schedules of the same record: the same instants, the same misses
        for schedule in ("waves", "recorded"):
            out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                                "--capacity-mb", f"{page / 1e6}", "--schedule", schedule)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("median 6.00", out.stdout)
        # the start-group union: both CTAs in one group of m = 2 whole lists: N_e (1 - (1 - p)^2) + W + 1
        # pages with N_e = 123, p = 2 / 123
        out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                            "--capacity-mb", "1000", "--union-eps", "0.02")
        self.assertEqual(out.returncode, 0, out.stderr)
        want = 123 * (1 - (1 - 2 / 123) ** 2) + 2
        self.assertIn(f"union (eps 0.02, measured schedule): / counted median {want:.2f}", out.stdout)
        # the convoy rule: both CTAs of the stream dispatched at once read in step, as recorded
        convoy = ["--schedule", "convoy", "--visit-ns-sm", "145,182,196,223", "--read-tbs", "3"]
        out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                            "--capacity-mb", f"{page / 1e6}", *convoy)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("median 6.00", out.stdout)
        # the closed loop: both CTAs start at once; the second reads its tile after the first's, so an
        # ample cache misses each distinct page once and a one-line cache keeps neither shared page
        # (8 misses); the simulated time is printed beside the record's (1 us)
        closed = ["--schedule", "closed", "--visit-ns-sm", "145,182,196,223", "--read-tbs", "3"]
        for share in ("resident", "missing"):
            out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                                "--capacity-mb", f"{page / 1e6},1000", "--dram-share", share, *closed)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("record us", out.stdout)
            row = [l for l in out.stdout.splitlines() if l.strip().startswith("0 ")][0].split()
            self.assertEqual(float(row[5]), 8.0)
            self.assertIn(float(row[6]), (4.0, 5.0, 6.0))
            self.assertEqual(row[7], "1")
        bad = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                            "--schedule", "closed", "--read-tbs", "3", "--visit-ns-sm", "1,2,3,4", "--cta-spread", "-1")
        self.assertEqual(bad.returncode, 2)
        bad = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                            "--schedule", "convoy", "--read-tbs", "3")
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--visit-ns-sm", bad.stderr)
        # a 128-row tile (the warp-specialised kernel) reads 128-token KV tiles: one recorded tile of
        # a list of K = 6 + W 1 + tail 1 = 8 pages covers all 8 (a 64-token tile would cover 4)
        h5_128 = os.path.join(self.tmp, "run128.h5")
        write_points(h5_128, dict(cols, budget_chunks=[6, 6], tile_rows_cisa=[128, 128], q_heads=[128, 128],
                                  kv_heads=[1, 1]))
        d128 = os.path.join(self.tmp, "ctas128")
        os.makedirs(d128)
        write_ctas(os.path.join(d128, "point_0_attn_ctas.csv"), [(0, 0, 0, 1, 0, 250, 500, 750, 1000)])
        out = self.run_tool("l2_trace_sim.py", "--ctas", d128, "--result", h5_128, "--tool", ARGS.l2_reuse,
                            "--capacity-mb", "1000")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("median 8.00", out.stdout)
        # one CTA after the other (one slot): three other pages pass between the two reads of the
        # window page, so a one-line cache serves nothing: 8 misses
        write_ctas(os.path.join(d, "point_0_attn_ctas.csv"),
                   [(0, 0, 0, 1, 0, 250, 500, 750, 1000), (1, 0, 1, 1, 1000, 1250, 1500, 1750, 2000)])
        out = self.run_tool("l2_trace_sim.py", "--ctas", d, "--result", h5, "--tool", ARGS.l2_reuse,
                            "--capacity-mb", f"{page / 1e6}", "--schedule", "recorded")
        self.assertIn("median 8.00", out.stdout)
        for bad in (["--ctas", os.path.join(self.tmp, "none"), "--result", h5],
                    ["--ctas", d, "--result", h5, "--points", "0,7"],
                    ["--ctas", d, "--result", h5, "--capacity-mb", "x"],
                    ["--ctas", d, "--result", os.path.join(self.tmp, "missing.h5")]):
            r = self.run_tool("l2_trace_sim.py", *bad, "--tool", ARGS.l2_reuse)
            self.assertEqual(r.returncode, 2, (bad, r.stdout, r.stderr))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--analysis-dir", required=True)
    ap.add_argument("--l2-reuse", help="the l2_reuse binary (test_trace_sim)")
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)
