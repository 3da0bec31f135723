"""Lab 10's coarsening figure (plotting/coarsening.py) from a CSV in the format of
grading/tools/coarsening_study.py: one curve per n over C, the one-wave grid and CUB as lines of the same
colour; drawn only when asked for by name, and a CSV without the study's rows is an error then."""

import os
import subprocess
import sys
import tempfile
import unittest

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)

import reduction_plots as rp  # noqa: E402
from plotting.coarsening import coarsening_points, plot_coarsening  # noqa: E402
from plotting.timings import COLUMNS, NoDataError  # noqa: E402

GPU, DATE = "a named GPU", "2026-12-01"   # made-up rows of a test: no figure of the course


def row(student, lab, n, median, status="ok"):
    return f"{student},{lab},float,{n},{median},,,,,,,{status},{GPU},{DATE}"


STUDY = "\n".join([",".join(COLUMNS)] + [
    row(f"C={c}", "10_two_step", n, 100.0 + c * (n >> 20)) for n in (1 << 24, 1 << 28) for c in (1, 2, 32)] + [
    row("C=4", "10_two_step", 1 << 24, "", "WRONG_ANSWER"),
    row("one wave", "10_two_step", 1 << 24, 110.0), row("one wave", "10_two_step", 1 << 28, 900.0),
    row("reference", "10_two_step", 1 << 24, 111.0), row("baseline", "cub", 1 << 24, 105.0),
    row("baseline", "roof", 1 << 24, 95.0)]) + "\n"


class CoarseningFigureTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "coarsening.csv")
        with open(self.csv, "w", encoding="utf-8") as handle:
            handle.write(STUDY)
        self.rows = rp.load_timings(self.csv)

    def tearDown(self):
        self.tmp.cleanup()

    def test_points_are_the_timed_variants_by_n_sorted_by_c(self):
        points = coarsening_points(self.rows)
        self.assertEqual(sorted(points), [1 << 24, 1 << 28])
        self.assertEqual([c for c, _ in points[1 << 24]], [1, 2, 32])  # C=4 failed: not a point

    def test_one_curve_per_n_and_the_one_wave_grid_and_cub_beside_it(self):
        (ax,) = plot_coarsening(self.rows).axes
        labels = [line.get_label() for line in ax.get_lines()]
        self.assertEqual(labels, ["n = 2^24: C vectors per thread", "n = 2^24: one wave (the lab's grid)",
                                  "n = 2^24: CUB", "n = 2^28: C vectors per thread", "n = 2^28: one wave (the lab's grid)"])
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["1", "2", "32"])

    def test_rows_without_the_study_are_no_data(self):
        plain = [t for t in self.rows if not t.student.startswith("C=")]
        with self.assertRaises(NoDataError):
            plot_coarsening(plain)

    def test_the_command_draws_it_by_name_only(self):
        out = os.path.join(self.tmp.name, "plots")
        env = dict(os.environ, MPLBACKEND="Agg")
        done = subprocess.run([sys.executable, os.path.join(PLOTS_DIR, "reduction_plots.py"), self.csv, "--out", out,
                               "--figures", "coarsening", "--formats", "png"], capture_output=True, text=True, env=env)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(os.listdir(out), ["coarsening_float.png"])
        self.assertNotIn("coarsening", rp.FIGURES)  # a class's timings never try to draw it


if __name__ == "__main__":
    unittest.main()
