"""The anonymized class leaderboard: ranks per lab from ratio_to_ref, fastest first, ties sharing a
rank, and no student name anywhere in the figure or its files."""

import os
import sys
import tempfile
import unittest

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)

import reduction_plots as rp  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from plotting.leaderboard import plot_leaderboard, ranked_ratios  # noqa: E402
from plotting.timings import COLUMNS  # noqa: E402

GPU, DATE, N = "NVIDIA H200", "2026-11-22", 1 << 24
# Names a leak would show: distinctive, non-ASCII, and one that looks like a lab's label.
NAMES = ["zelda.quartermaine", "Bjørn_Øyvindsen", "rank1", "s042"]
RATIOS = {  # student -> lab -> ratio at 2^24 float
    "zelda.quartermaine": {"02_atomic": 1.30, "05_sequential": 0.99},
    "Bjørn_Øyvindsen": {"02_atomic": 1.05, "05_sequential": 1.91},
    "rank1": {"02_atomic": 1.05, "05_sequential": 1.02},
    "s042": {"02_atomic": 0.98},
}


def timings_csv(folder):
    lines = [",".join(COLUMNS)]
    for lab, ref in (("02_atomic", 29000.0), ("05_sequential", 90.0)):
        lines.append(f"reference,{lab},float,{N},{ref},,,,,,,ok,{GPU},{DATE}")
    for student, labs in RATIOS.items():
        for lab, ratio in labs.items():
            ref = 29000.0 if lab == "02_atomic" else 90.0
            lines.append(f"{student},{lab},float,{N},{ref * ratio:.2f},,,,,{ref},{ratio},ok,{GPU},{DATE}")
    lines.append(f"s042,05_sequential,float,{N},,,,,,,,TIMEOUT,{GPU},{DATE}")
    path = os.path.join(folder, "timings.csv")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


class LeaderboardTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = timings_csv(self.tmp.name)
        self.rows = rp.load_timings(self.csv)

    def tearDown(self):
        self.tmp.cleanup()

    def test_ranks_are_fastest_first_and_ties_share_one(self):
        ranked = ranked_ratios(self.rows)
        self.assertEqual(ranked["02_atomic"], [(1, 0.98), (2, 1.05), (2, 1.05), (4, 1.30)])
        self.assertEqual(ranked["05_sequential"], [(1, 0.99), (2, 1.02), (3, 1.91)])  # the TIMEOUT is not ranked

    def test_bars_are_the_ratios_and_labels_only_ranks(self):
        figure = plot_leaderboard(self.rows, top=3)
        atomic = next(ax for ax in figure.axes if ax.get_title().startswith("02_atomic"))
        self.assertEqual([round(p.get_width(), 2) for p in atomic.patches], [0.98, 1.05, 1.05])
        self.assertEqual([t.get_text() for t in atomic.get_yticklabels()], ["#1", "#2", "#2"])
        self.assertIn("4 timed", atomic.get_title())

    def test_no_name_in_any_text_of_the_figure(self):
        figure = plot_leaderboard(self.rows)
        texts = [t.get_text() for t in figure.findobj(Text)]
        self.assertTrue(any("#1" in t for t in texts))
        for name in NAMES:
            for text in texts:
                self.assertNotIn(name, text)

    def test_no_name_in_the_written_files_even_without_anonymize(self):
        out = os.path.join(self.tmp.name, "plots")
        self.assertEqual(rp.main([self.csv, "--out", out, "--figures", "leaderboard", "--formats", "svg"]), 0)
        self.assertEqual(os.listdir(out), ["leaderboard.svg"])
        with open(os.path.join(out, "leaderboard.svg"), encoding="utf-8") as handle:
            svg = handle.read()
        self.assertIn("#1", svg)  # text stays text in the SVG (and metadata is plain), so a name would show
        for name in NAMES:
            self.assertNotIn(name, svg)

    def test_nothing_measured_is_no_data(self):
        rows = [t for t in self.rows if t.student == "reference"]
        with self.assertRaisesRegex(rp.NoDataError, "ranks measured labs only"):
            plot_leaderboard(rows)

    def test_top_must_be_positive(self):
        with self.assertRaises(SystemExit):
            rp.main([self.csv, "--out", self.tmp.name, "--figures", "leaderboard", "--top", "0"])


if __name__ == "__main__":
    unittest.main()
