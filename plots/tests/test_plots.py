"""Unit tests for plots/reduction_plots.py: loading and validation, each figure's content, and the CLI."""

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

PLOTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PLOTS_DIR)  # the module lives in plots/, one level above this file

import reduction_plots as rp  # noqa: E402

FIXTURE = os.path.join(PLOTS_DIR, "tests", "fixtures", "timings.csv")
SCRIPT = os.path.join(PLOTS_DIR, "reduction_plots.py")
GPU = "NVIDIA H100 80GB HBM3"
DATE = "2026-11-21"
LABS = ["01_host_sum", "02_atomic", "03_shared_atomic", "04_interleaved", "05_sequential",
        "06_first_add", "07_last_warp", "08_complete_unroll", "09_shuffle", "10_two_step"]
STUDENTS = ["alice", "bob", "carol", "dave"]
N_LARGE, N_SMALL = 1 << 24, 1 << 20
from plotting.timings import COLUMNS  # noqa: E402

HEADER = ",".join(COLUMNS)
GOOD_ROW = f"reference,02_atomic,float,1024,12.5,12.0,0.3,0.3,0.1,,,ok,{GPU},{DATE}"


def fixture_rows():
    return rp.load_timings(FIXTURE)


def the_axes(figure):
    (ax,) = figure.axes
    return ax


def tick_labels(ax):
    return [label.get_text() for label in ax.get_xticklabels()]


def legend_labels(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def axes_texts(ax):
    return [text.get_text() for text in ax.texts]


def lines_labelled(ax, label):
    return [line for line in ax.get_lines() if line.get_label() == label]


def every_string(ax):
    return [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + tick_labels(ax) + legend_labels(ax) + axes_texts(ax)


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return path


class SchemaTest(unittest.TestCase):
    def test_every_writer_of_timings_csv_writes_the_one_schema(self):
        bench = open(os.path.join(PLOTS_DIR, "..", "common", "bench", "bench_report.cpp"), encoding="utf-8").read()
        self.assertIn(f'"{HEADER}"', bench, "reduction_bench's CSV header differs from plotting.timings.COLUMNS")
        sys.path.insert(0, os.path.join(PLOTS_DIR, "..", "grading"))
        from grader.report.reports import TIMINGS_COLUMNS
        self.assertEqual(tuple(TIMINGS_COLUMNS), COLUMNS)
        with open(FIXTURE, encoding="utf-8") as handle:
            self.assertEqual(handle.readline().strip(), HEADER)


class LadderExtendsTest(TempDirTestCase):
    def test_a_lab_added_to_the_course_gets_its_bar_and_step_on_the_ladder(self):
        with open(FIXTURE, encoding="utf-8") as handle:
            text = handle.read()
        ten = next(t for t in fixture_rows() if t.student == "reference" and t.lab == "10_two_step"
                   and t.type == "float" and t.n == N_LARGE).median_us
        eleven = ten / 1.25
        row = f"reference,11_single_pass,float,{N_LARGE},{eleven},{eleven},0.1,0.1,0.1,,,ok,{GPU},{DATE}\n"
        rows = rp.load_timings(self.write("timings.csv", text + row))
        ax = the_axes(rp.plot_ladder(rows, n=N_LARGE, dtype="float"))
        self.assertEqual(tick_labels(ax), LABS + ["11_single_pass"])
        self.assertTrue(any("1.25" in text for text in axes_texts(ax)), axes_texts(ax))


class LoadTimingsTest(TempDirTestCase):
    def test_fixture_parses_every_row(self):
        rows = fixture_rows()
        self.assertEqual(len(rows), 200)
        self.assertEqual({t.type for t in rows}, {"int", "float"})
        self.assertEqual({t.n for t in rows}, {N_SMALL, N_LARGE})
        self.assertEqual(rp.lab_order(rows), LABS)
        self.assertEqual(rp.student_names(rows), STUDENTS)

    def test_failed_rows_have_no_times_and_keep_their_verdict(self):
        failed = [t for t in fixture_rows() if not t.ok]
        self.assertEqual({t.status for t in failed}, {"COMPILE_ERROR", "TIMEOUT"})
        self.assertTrue(all(t.median_us is None for t in failed))

    def test_numbers_are_parsed_and_optional_empties_are_none(self):
        rows = {(t.student, t.lab, t.type, t.n): t for t in fixture_rows()}
        cub = rows[("baseline", "cub", "float", N_LARGE)]
        self.assertAlmostEqual(cub.median_us, 24.0)
        self.assertAlmostEqual(cub.gbps, 2796.2)
        roof = rows[("baseline", "roof", "float", N_LARGE)]
        self.assertIsNone(roof.min_us)
        self.assertEqual(rows[("alice", "02_atomic", "float", N_SMALL)].row, 13)  # header is row 1

    def test_extra_and_reordered_columns_are_tolerated(self):
        path = self.write("extra.csv", "note,status,n,type,lab,student,median_us,run_id\n"
                                       "hi,ok,1024,float,02_atomic,reference,12.5,7\n")
        (timing,) = rp.load_timings(path)
        self.assertEqual((timing.student, timing.lab, timing.n, timing.median_us),
                         ("reference", "02_atomic", 1024, 12.5))
        self.assertIsNone(timing.gbps)
        self.assertAlmostEqual(rp.bandwidth_gbps(timing), 1024 * 4 / 12.5e3)

    def test_failed_row_may_hold_junk_numbers(self):
        path = self.write("junk.csv", f"{HEADER}\nbob,02_atomic,float,1024,n/a,,,,,,,TIMEOUT,{GPU},{DATE}\n")
        (timing,) = rp.load_timings(path)
        self.assertEqual(timing.status, "TIMEOUT")
        self.assertIsNone(timing.median_us)

    def assert_load_error(self, text, *fragments, name="bad.csv"):
        path = self.write(name, text)
        with self.assertRaises(rp.TimingsError) as caught:
            rp.load_timings(path)
        message = str(caught.exception)
        for fragment in (path,) + fragments:
            self.assertIn(fragment, message)
        return message

    def test_missing_file(self):
        path = os.path.join(self.tmp, "nope.csv")
        with self.assertRaisesRegex(rp.TimingsError, "nope.csv: no such file"):
            rp.load_timings(path)

    def test_empty_file(self):
        self.assert_load_error("", "empty")

    def test_header_without_rows(self):
        self.assert_load_error(HEADER + "\n", "no data rows")

    def test_missing_required_column(self):
        header = HEADER.replace("median_us,", "")
        self.assert_load_error(header + "\nreference,02_atomic,float,1024,12.0,0.3,0.3,0.1,,,ok,,\n",
                               "row 1", "'median_us'")

    def test_non_numeric_time_in_ok_row(self):
        bad = GOOD_ROW.replace("12.5,", "fast,", 1)
        self.assert_load_error(f"{HEADER}\n{GOOD_ROW}\n{bad}\n", "row 3", "column 'median_us'", "'fast'")

    def test_non_numeric_optional_column_in_ok_row(self):
        bad = GOOD_ROW.replace(",0.3,0.1,", ",lots,0.1,")
        self.assert_load_error(f"{HEADER}\n{bad}\n", "row 2", "column 'gbps'", "'lots'")

    def test_empty_time_in_ok_row(self):
        bad = GOOD_ROW.replace("12.5,", ",", 1)
        self.assert_load_error(f"{HEADER}\n{bad}\n", "row 2", "column 'median_us'", "empty")

    def test_non_positive_time(self):
        bad = GOOD_ROW.replace("12.5,", "0,", 1)
        self.assert_load_error(f"{HEADER}\n{bad}\n", "row 2", "column 'median_us'")

    def test_unknown_type(self):
        bad = GOOD_ROW.replace(",float,", ",double,")
        self.assert_load_error(f"{HEADER}\n{GOOD_ROW.replace('02_', '03_')}\n{bad}\n",
                               "row 3", "column 'type'", "double")

    def test_non_integer_n(self):
        bad = GOOD_ROW.replace(",1024,", ",1e6,")
        self.assert_load_error(f"{HEADER}\n{bad}\n", "row 2", "column 'n'", "1e6")

    def test_row_numbers_count_blank_lines_like_an_editor(self):
        bad = GOOD_ROW.replace("12.5,", "fast,", 1)
        self.assert_load_error(f"{HEADER}\n\n{bad}\n", "row 3", "column 'median_us'")

    def test_duplicate_measurement(self):
        self.assert_load_error(f"{HEADER}\n{GOOD_ROW}\n{GOOD_ROW}\n", "row 3", "duplicate of row 2")

    def test_baseline_row_with_a_lab_name(self):
        bad = GOOD_ROW.replace("reference,", "baseline,")
        self.assert_load_error(f"{HEADER}\n{bad}\n", "row 2", "column 'lab'")


class RunInfoTest(TempDirTestCase):
    def test_csv_columns_give_gpu_and_date(self):
        self.assertEqual(rp.run_info(fixture_rows()), rp.RunInfo(GPU, DATE))

    def test_sidecar_fills_empty_columns(self):
        csv_path = self.write("run.csv", f"{HEADER}\nreference,02_atomic,float,1024,12.5,,,,,,,ok,,\n")
        self.write("run.json", json.dumps({"device": {"name": "NVIDIA H200"}, "date": "2026-12-01T09:00:00Z"}))
        sidecar = rp.find_sidecar(csv_path)
        self.assertEqual(sidecar, os.path.join(self.tmp, "run.json"))
        info = rp.run_info(rp.load_timings(csv_path), rp.load_sidecar(sidecar))
        self.assertEqual(info, rp.RunInfo("NVIDIA H200", "2026-12-01"))

    def test_without_any_source_the_title_says_unknown(self):
        csv_path = self.write("run.csv", f"{HEADER}\nreference,02_atomic,float,1024,12.5,,,,,,,ok,,\n")
        self.assertIsNone(rp.find_sidecar(csv_path))
        self.assertEqual(rp.run_info(rp.load_timings(csv_path)), rp.RunInfo("unknown GPU", "unknown date"))

    def test_invalid_sidecar(self):
        path = self.write("run.json", "{\n  \"device\": \n")
        with self.assertRaisesRegex(rp.TimingsError, "run.json: row 3: invalid JSON"):
            rp.load_sidecar(path)


def assert_title_describes(test, ax, n, dtype):
    title = ax.get_title()
    for fragment in (GPU, str(n), dtype, DATE):
        test.assertIn(fragment, title)


class ByLabFigureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = fixture_rows()
        cls.ax = the_axes(rp.plot_by_lab(cls.rows, n=N_LARGE, dtype="float"))

    def test_labs_on_the_x_axis_and_a_log_time_axis(self):
        self.assertEqual(tick_labels(self.ax), LABS)
        self.assertEqual(self.ax.get_yscale(), "log")
        assert_title_describes(self, self.ax, N_LARGE, "float")

    def test_one_point_series_per_student(self):
        for student in STUDENTS:
            (series,) = lines_labelled(self.ax, student)
            expected = {"bob": 9, "carol": 9, "dave": 8}.get(student, 10)
            self.assertEqual(len(series.get_xdata()), expected, student)

    def test_students_are_jittered_deterministically_in_sorted_order(self):
        xs = [lines_labelled(self.ax, s)[0].get_xdata()[0] for s in STUDENTS]
        self.assertEqual(xs, sorted(xs))
        self.assertAlmostEqual(xs[0], -0.3)
        self.assertAlmostEqual(xs[-1], 0.3)

    def test_reference_is_one_level_per_lab(self):
        (levels,) = [c for c in self.ax.collections if c.get_label() == "reference"]
        self.assertEqual(len(levels.get_segments()), len(LABS))

    def test_cub_and_roof_are_labelled_dashed_lines(self):
        labels = [line.get_label() for line in self.ax.get_lines()]
        self.assertIn("CUB 24.0 µs", labels)
        self.assertIn("read roof 20.0 µs", labels)
        self.assertIn("CUB 24.0 µs", axes_texts(self.ax))
        self.assertEqual(len(self.ax.get_lines()), len(STUDENTS) + 2 + 1)  # students, baselines, failure marks

    def test_failed_and_missing_labs_are_marked(self):
        (marks,) = lines_labelled(self.ax, "failed run (status ≠ ok)")
        self.assertEqual(len(marks.get_xdata()), 2)  # carol's TIMEOUT and bob's COMPILE_ERROR
        notes = {round(t.get_position()[0]): t.get_text() for t in self.ax.texts if "failed" in t.get_text()
                 or "missing" in t.get_text()}
        self.assertEqual(notes, {1: "1 failed", 7: "1 failed", 8: "1 missing", 9: "1 missing"})

    def test_smaller_n_has_only_the_compile_error(self):
        ax = the_axes(rp.plot_by_lab(self.rows, n=N_SMALL, dtype="float"))
        (marks,) = lines_labelled(ax, "failed run (status ≠ ok)")
        self.assertEqual(len(marks.get_xdata()), 1)
        assert_title_describes(self, ax, N_SMALL, "float")

    def test_anonymize_hides_real_names(self):
        ax = the_axes(rp.plot_by_lab(self.rows, n=N_LARGE, dtype="int", anonymize=True))
        strings = " ".join(every_string(ax))
        for student in STUDENTS:
            self.assertNotIn(student, strings)
        self.assertEqual([f"student {i}" for i in range(1, 5)],
                         [label for label in legend_labels(ax) if label.startswith("student")])

    def test_missing_size_is_a_clear_error(self):
        with self.assertRaisesRegex(rp.NoDataError, "n=1000, type=float.*float n=1048576"):
            rp.plot_by_lab(self.rows, n=1000)


class LadderFigureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = fixture_rows()
        cls.ax = the_axes(rp.plot_ladder(cls.rows, n=N_LARGE, dtype="float"))

    def band(self, ax):
        return [text for text in axes_texts(ax) if "step" in text]

    def test_one_bar_per_lab_on_a_log_axis(self):
        self.assertEqual(len(self.ax.patches), len(LABS))
        self.assertEqual(tick_labels(self.ax), LABS)
        self.assertEqual(self.ax.get_yscale(), "log")
        assert_title_describes(self, self.ax, N_LARGE, "float")

    def test_bars_reach_the_reference_times(self):
        tops = [patch.get_y() + patch.get_height() for patch in self.ax.patches]
        self.assertAlmostEqual(tops[0], 15800.0)
        self.assertAlmostEqual(tops[-1], 24.8)

    def test_step_and_cumulative_speedups_are_annotated(self):
        band = self.band(self.ax)
        self.assertEqual(len(band), len(LABS))
        self.assertEqual(band[0], "15800 µs\nstep —\ntotal ×1.0")
        self.assertEqual(band[1], "6100 µs\nstep ×2.59\ntotal ×2.6")  # 15800 / 6100
        self.assertEqual(band[-1], "24.8 µs\nstep ×1.07\ntotal ×637")  # 26.5 / 24.8 and 15800 / 24.8

    def test_roof_and_cub_lines(self):
        labels = [line.get_label() for line in self.ax.get_lines()]
        self.assertEqual(labels, ["CUB 24.0 µs", "read roof 20.0 µs"])

    def test_student_overlay_with_failed_lab(self):
        ax = the_axes(rp.plot_ladder(self.rows, n=N_LARGE, student="bob"))
        (overlay,) = lines_labelled(ax, "bob")
        self.assertEqual(len(overlay.get_xdata()), 9)
        self.assertIn("COMPILE_ERROR", axes_texts(ax))
        self.assertEqual(len(lines_labelled(ax, "bob: failed or missing")[0].get_xdata()), 1)

    def test_overlay_is_anonymized_too(self):
        ax = the_axes(rp.plot_ladder(self.rows, n=N_LARGE, student="carol", anonymize=True))
        self.assertTrue(lines_labelled(ax, "student 3"))
        self.assertNotIn("carol", " ".join(every_string(ax)))

    def test_unknown_student(self):
        with self.assertRaisesRegex(rp.TimingsError, "student 'zoe' is not in the file"):
            rp.plot_ladder(self.rows, n=N_LARGE, student="zoe")

    def test_needs_reference_rows(self):
        students_only = [t for t in self.rows if t.student != rp.REFERENCE]
        with self.assertRaises(rp.NoDataError):
            rp.plot_ladder(students_only, n=N_LARGE)

    def test_failed_reference_is_named_and_skipped_by_the_speedups(self):
        rows = [dataclasses.replace(t, status="TIMEOUT", median_us=None)
                if (t.student, t.lab, t.n, t.type) == ("reference", "05_sequential", N_LARGE, "float") else t
                for t in self.rows]
        ax = the_axes(rp.plot_ladder(rows, n=N_LARGE))
        self.assertEqual(len(ax.patches), len(LABS) - 1)
        self.assertIn("reference TIMEOUT", axes_texts(ax))
        self.assertEqual(self.band(ax)[4], "108 µs\nstep ×2.69\ntotal ×146")  # 290 / 108: compared with lab 04
        by_lab = the_axes(rp.plot_by_lab(rows, n=N_LARGE))
        self.assertIn("reference TIMEOUT", axes_texts(by_lab))

    def test_speedups_skip_labs_without_a_time(self):
        self.assertEqual(rp.ladder_speedups([100.0, None, 25.0, 20.0]),
                         [(1.0, 1.0), None, (4.0, 4.0), (1.25, 5.0)])


class StudentFigureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = fixture_rows()

    def test_grouped_bars_with_compile_error_named(self):
        ax = the_axes(rp.plot_student(self.rows, "bob", n=N_LARGE))
        self.assertEqual(len(ax.patches), len(LABS) + 9)
        self.assertEqual(tick_labels(ax), LABS)
        self.assertIn("COMPILE_ERROR", axes_texts(ax))
        self.assertTrue(ax.get_title().startswith("bob vs reference"))
        assert_title_describes(self, ax, N_LARGE, "float")

    def test_missing_labs_are_named(self):
        ax = the_axes(rp.plot_student(self.rows, "dave", n=N_LARGE, dtype="int"))
        self.assertEqual(axes_texts(ax).count("missing"), 2)
        self.assertEqual(len(lines_labelled(ax, "dave: failed or missing")[0].get_xdata()), 2)

    def test_ratio_to_reference_over_each_bar(self):
        ax = the_axes(rp.plot_student(self.rows, "alice", n=N_LARGE))
        ratios = [text for text in axes_texts(ax) if text.endswith("×")]
        self.assertEqual(len(ratios), len(LABS))
        self.assertEqual(ratios[1], "0.97×")

    def test_anonymized_title(self):
        ax = the_axes(rp.plot_student(self.rows, "bob", n=N_LARGE, anonymize=True))
        self.assertTrue(ax.get_title().startswith("student 2 vs reference"))
        self.assertNotIn("bob", " ".join(every_string(ax)))


class SweepFigureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = fixture_rows()

    def test_all_references_plus_cub_and_roof_on_a_log2_axis(self):
        ax = the_axes(rp.plot_sweep(self.rows, dtype="float"))
        self.assertEqual([line.get_label() for line in ax.get_lines()], LABS + ["CUB", "read roof"])
        self.assertEqual(ax.get_xscale(), "log")
        self.assertEqual(ax.xaxis.get_transform().base, 2)
        self.assertEqual(list(ax.get_xticks()), [N_SMALL, N_LARGE])
        self.assertEqual(ax.get_yscale(), "log")
        for fragment in (GPU, "float", DATE):
            self.assertIn(fragment, ax.get_title())

    def test_chosen_labs_only(self):
        ax = the_axes(rp.plot_sweep(self.rows, dtype="int", labs=["02_atomic", "05_sequential"]))
        self.assertEqual([line.get_label() for line in ax.get_lines()],
                         ["02_atomic", "05_sequential", "CUB", "read roof"])
        (atomic,) = lines_labelled(ax, "02_atomic")
        self.assertEqual(list(atomic.get_ydata()), [140.0, 2150.0])

    def test_bandwidth_metric(self):
        ax = the_axes(rp.plot_sweep(self.rows, labs=["10_two_step"], metric="gbps"))
        self.assertIn("GB/s", ax.get_ylabel())
        self.assertEqual(ax.get_yscale(), "linear")
        (roof,) = lines_labelled(ax, "read roof")
        self.assertEqual(list(roof.get_ydata()), [3350.0, 3350.0])

    def test_unknown_lab(self):
        with self.assertRaisesRegex(rp.TimingsError, "11_magic.*available: 01_host_sum"):
            rp.plot_sweep(self.rows, labs=["11_magic"])


class CommandLineTest(TempDirTestCase):
    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = rp.main(list(argv))
        return status, out.getvalue(), err.getvalue()

    def assert_figure_files(self, stem, formats=("png", "svg")):
        for fmt in formats:
            path = os.path.join(self.tmp, f"{stem}.{fmt}")
            self.assertTrue(os.path.isfile(path), path)
            with open(path, "rb") as handle:
                head = handle.read(200)
            self.assertGreater(os.path.getsize(path), 1000, path)
            self.assertTrue(head.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in head, path)

    def test_default_run_writes_every_figure(self):
        status, out, err = self.run_main(FIXTURE, "--out", self.tmp, "--student", "carol")
        self.assertEqual(status, 0, err)
        for stem in ["status", "by_lab", "ladder", "sweep", "leaderboard"] + [f"student_{s}" for s in STUDENTS]:
            self.assert_figure_files(stem)
        self.assertEqual(len(out.split()), 18)
        with open(os.path.join(self.tmp, "ladder.svg"), encoding="utf-8") as handle:
            self.assertIn(GPU, handle.read())  # text stays searchable text in the SVG

    def test_figures_drawn_by_several_processes_are_those_of_one(self):
        listed, files = [], []
        for jobs in ("1", "3"):
            out = os.path.join(self.tmp, f"jobs{jobs}")
            status, printed, err = self.run_main(FIXTURE, "--out", out, "--figures",
                                                 "per-student,by-lab,status,ladder,sweep,leaderboard", "--jobs", jobs,
                                                 "--formats", "svg,png")
            self.assertEqual(status, 0, err)
            listed.append([os.path.relpath(line, out) for line in printed.split()])
            contents = {}
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), "rb") as handle:
                    contents[name] = handle.read()
            files.append(contents)
        self.assertEqual(listed[0][:2], [f"student_{STUDENTS[0]}.svg", f"student_{STUDENTS[0]}.png"])
        self.assertEqual(listed[1], listed[0])
        self.assertEqual(listed[0][-2:], ["leaderboard.svg", "leaderboard.png"])   # in the order asked for
        self.assertEqual(len(files[0]), 2 * len(STUDENTS) + 2 * 5)
        self.assertEqual(files[1], files[0])

    def test_anonymized_files_and_svg_hide_names(self):
        status, _, err = self.run_main(FIXTURE, "--out", self.tmp, "--anonymize", "--figures", "by-lab,per-student",
                                       "--n", "2^20", "--type", "int")
        self.assertEqual(status, 0, err)
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         sorted(["by_lab.png", "by_lab.svg"] + [f"student_{i}.{f}" for i in range(1, 5)
                                                                for f in ("png", "svg")]))
        with open(os.path.join(self.tmp, "by_lab.svg"), encoding="utf-8") as handle:
            svg = handle.read()
        self.assertIn("student 1", svg)
        for student in STUDENTS:
            self.assertNotIn(student, svg)

    def test_formats_and_sweep_options(self):
        status, out, err = self.run_main(FIXTURE, "--out", self.tmp, "--figures", "sweep", "--formats", "png",
                                         "--labs", "02_atomic,05_sequential", "--metric", "gbps")
        self.assertEqual(status, 0, err)
        self.assertEqual(os.listdir(self.tmp), ["sweep.png"])

    def test_sizes_can_be_written_as_powers_of_two(self):
        parser = rp.build_parser()
        for text in ("16777216", "2^24", "1<<24"):
            self.assertEqual(parser.parse_args([FIXTURE, "--out", self.tmp, "--n", text]).n, N_LARGE)

    def test_bad_file_exits_2_with_error(self):
        bad = self.write("bad.csv", f"{HEADER}\n{GOOD_ROW.replace(',float,', ',double,')}\n")
        status, _, err = self.run_main(bad, "--out", self.tmp)
        self.assertEqual(status, 2)
        self.assertTrue(err.startswith("error: "), err)
        self.assertIn("row 2, column 'type'", err)

    def test_missing_file_exits_2(self):
        status, _, err = self.run_main(os.path.join(self.tmp, "absent.csv"), "--out", self.tmp)
        self.assertEqual(status, 2)
        self.assertIn("error: ", err)
        self.assertIn("absent.csv: no such file", err)

    def test_explicitly_requested_figure_without_data_is_an_error(self):
        status, _, err = self.run_main(FIXTURE, "--out", self.tmp, "--figures", "ladder", "--n", "1000")
        self.assertEqual(status, 2)
        self.assertIn("error: no measurements for n=1000", err)

    def test_default_figures_without_data_are_skipped_with_a_warning(self):
        status, out, err = self.run_main(FIXTURE, "--out", self.tmp, "--n", "1000", "--formats", "svg")
        self.assertEqual(status, 0, err)
        self.assertEqual(out.split(), [os.path.join(self.tmp, "sweep.svg")])
        self.assertEqual(err.count("warning: skipping"), 5)  # status, by-lab, ladder, per-student, leaderboard

    def test_script_exit_status_from_a_shell(self):
        bad = self.write("empty.csv", "")
        result = subprocess.run([sys.executable, SCRIPT, bad, "--out", self.tmp], capture_output=True, text=True,
                                env=dict(os.environ, MPLBACKEND="Agg"), timeout=120)
        self.assertEqual(result.returncode, 2)
        self.assertIn("error: ", result.stderr)
        self.assertIn("empty.csv", result.stderr)


if __name__ == "__main__":
    unittest.main()
