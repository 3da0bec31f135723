"""Plots of a run without a GPU: not-run labs are marked as not run (never as failures), passed
labs without a time as passed, no figure is drawn on empty axes, and the title names the machine."""

import json
import os
import sys
import tempfile
import unittest

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)

import reduction_plots as rp  # noqa: E402
from plotting.status import plot_status  # noqa: E402
from plotting.timings import add_grader_verdicts  # noqa: E402

HEADER = "student,lab,type,n,median_us,min_us,iqr_us,gbps,pct_roof,ref_median_us,ratio_to_ref,status,gpu,date"
N = 1 << 24
# What a grading run without a GPU writes: a NOT_RUN row per GPU lab, a verdict row for a failed
# lab, and no row for lab 01 that passed (nor for a missing lab).
NO_GPU_CSV = "\n".join([HEADER] + [
    f"{student},{lab},{kind},{N},,,,,,,,{status},,2026-11-22"
    for student, lab, status in (("alice", "02_atomic", "NOT_RUN"), ("alice", "03_shared_atomic", "NOT_RUN"),
                                 ("bob", "01_host_sum", "WRONG_ANSWER"), ("bob", "02_atomic", "NOT_RUN"),
                                 ("bob", "03_shared_atomic", "COMPILE_ERROR"))
    for kind in ("float", "int")]) + "\n"
RECORDS = {"alice": {"01_host_sum": "PASSED", "02_atomic": "NOT_RUN", "03_shared_atomic": "NOT_RUN"},
           "bob": {"01_host_sum": "WRONG_ANSWER", "02_atomic": "NOT_RUN", "03_shared_atomic": "COMPILE_ERROR"}}


def legend_labels(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


class NoGpuRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "timings.csv")
        with open(self.csv, "w", encoding="utf-8") as handle:
            handle.write(NO_GPU_CSV)
        os.mkdir(os.path.join(self.tmp.name, "students"))
        for student, labs in RECORDS.items():
            with open(os.path.join(self.tmp.name, "students", f"{student}.json"), "w", encoding="utf-8") as handle:
                json.dump({"student": student, "labs": {lab: {"verdict": v} for lab, v in labs.items()}}, handle)
        self.rows = add_grader_verdicts(rp.load_timings(self.csv), self.csv)

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_passed_lab_without_a_time_gets_a_passed_row_from_the_grader_records(self):
        added = [t for t in self.rows if t.status == "PASSED"]
        self.assertEqual({(t.student, t.lab, t.type) for t in added},
                         {("alice", "01_host_sum", "float"), ("alice", "01_host_sum", "int")})
        self.assertFalse(any(t.failed for t in added))

    def test_the_status_figure_marks_not_run_apart_from_failures(self):
        (ax,) = plot_status(self.rows).axes
        labels = legend_labels(ax)
        self.assertIn("not run (no GPU)", labels)
        self.assertIn("passed, not timed", labels)
        self.assertIn("failed (verdict written beside it)", labels)
        (not_run,) = [line for line in ax.get_lines() if line.get_label() == "not run (no GPU)"]
        self.assertEqual(sorted(zip(not_run.get_xdata(), not_run.get_ydata())), [(1, 0), (1, 1), (2, 0)])
        self.assertEqual(sorted(t.get_text() for t in ax.texts), ["COMPILE_ERROR", "WRONG_ANSWER"])

    def test_time_figures_are_not_drawn_on_empty_axes(self):
        for plot in (rp.plot_by_lab, lambda rows: rp.plot_student(rows, "alice")):
            with self.assertRaisesRegex(rp.NoDataError, r"no measured times .*labs not run: no GPU"):
                plot(self.rows)

    def test_the_title_names_this_machine_and_no_gpu(self):
        (ax,) = plot_status(self.rows).axes
        self.assertIn("no GPU (CPU: ", ax.get_title())
        self.assertNotIn("unknown GPU", ax.get_title())

    def test_the_command_line_draws_only_the_status_figure(self):
        out = os.path.join(self.tmp.name, "plots")
        self.assertEqual(rp.main([self.csv, "--out", out, "--formats", "png"]), 0)
        self.assertEqual(os.listdir(out), ["status.png"])


class PartlyMeasuredTest(unittest.TestCase):
    def test_not_run_labs_beside_measured_ones_get_their_own_mark_and_legend_entry(self):
        rows = rp.load_timings(os.path.join(PLOTS_DIR, "tests", "fixtures", "timings.csv"))
        rows = [t if not (t.student == "alice" and t.lab == "05_sequential") else
                type(t)(row=t.row, student=t.student, lab=t.lab, type=t.type, n=t.n, status="NOT_RUN")
                for t in rows]
        (ax,) = rp.plot_by_lab(rows).axes
        self.assertIn("not run (no GPU)", legend_labels(ax))
        (failed,) = [line for line in ax.get_lines() if line.get_label() == "failed run (status ≠ ok)"]
        self.assertEqual(len(failed.get_xdata()), 2)  # the fixture's two failures; the not-run lab is not one
        (ax,) = rp.plot_student(rows, "alice").axes
        self.assertIn("not run", [t.get_text() for t in ax.texts])


if __name__ == "__main__":
    unittest.main()
