#!/usr/bin/env python3
"""Figure defects of issue 13: no series in the grey of the style swatches, coinciding series kept
apart, titles in plain words, enough labels on a narrow log axis, legends only for drawn series.

    test_figures.py SOURCE_DIR
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(sys.argv[1], "analysis"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

import fig_common  # noqa: E402
import series  # noqa: E402


def is_grey(c):
    r, g, b = to_rgb(c)
    return abs(r - g) < 0.02 and abs(g - b) < 0.02


class Figures(unittest.TestCase):
    def test_series_colours_are_never_grey_or_black(self):
        for n in (1, 8, 9, 10, 16, 20):
            cols = fig_common.series_colors(n)
            self.assertEqual(len(cols), n)
            self.assertFalse(any(is_grey(c) for c in cols), n)
        self.assertTrue(is_grey(fig_common.STYLE_COLOR))

    def test_coinciding_series_differ_in_x_marker_and_style(self):
        x = np.array([131072.0, 1048576.0])
        shifted = [fig_common.dodge(x, i, 3) for i in range(3)]
        self.assertTrue(np.all(shifted[0] < shifted[1]) and np.all(shifted[1] < shifted[2]))
        self.assertTrue(np.allclose(shifted[1], x))  # the middle one stays put
        self.assertLess(shifted[2][0] / x[0], 1.2)   # a few per cent, not a different context
        styles = [fig_common.series_style(i) for i in range(4)]
        self.assertEqual(len({s["marker"] for s in styles}), 4)
        self.assertEqual(len({str(s["linestyle"]) for s in styles}), 4)

    def test_titles_name_what_is_fixed_in_plain_words(self):
        self.assertEqual(series.fixed_note("batch", 16, {8, 16, 32}), "B = 16 (the file also has 8, 32)")
        self.assertEqual(series.fixed_note("batch_requested", 0, {0, 4, 8}), "batch as large as memory allows")
        self.assertEqual(series.title_note([]), "")
        note = series.title_note([series.fixed_note("weight_dtype", "fp8", {"bf16", "fp8"})])
        self.assertEqual(note, "shown at weights = fp8 (the file also has bf16)")
        self.assertNotIn("slice", note)
        self.assertNotIn("=0", series.fixed_note("batch_requested", 0, {0, 4}))

    def test_narrow_log_axis_has_several_labels(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [26, 52, 140])
        ax.set_yscale("log")
        fig_common.plain_log_ticks(ax)
        lo, hi = ax.get_ylim()
        labelled = [t for t in ax.get_yticks() if lo <= t <= hi]
        self.assertGreaterEqual(len(labelled), 4, labelled)
        plt.close(fig)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
