"""The grader's command line on the example class with a simulated toolchain: the machine-without-a-GPU
mode, the self-check, student and lab selection, seeds, file names and an unsandboxed grading."""

import contextlib
import csv
import io
import json
import shutil
import unittest
from pathlib import Path

from grader.contract import ExitStatus
from grader_tests.engine_fixtures import SUBMISSIONS, GradingCase, students
from grader_tests.helpers import FakeToolchain
from grader import cli
from grader.stages.engine import NO_GPU_MESSAGE, PUBLIC_SEED
from class_files.names import student_file_name


class TestCommandLine(GradingCase):
    def run_cli(self, argv, toolchain):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
            status = cli.main([*argv, "--no-plots"], toolchain=toolchain, manifest=self.manifest)   # figures: grader.report_browser
        return status, buffer.getvalue()

    def test_without_a_gpu_gpu_labs_are_not_run_and_left_blank(self):
        status, output = self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out)],
                                      FakeToolchain(self.expected, gpu=False))
        self.assertEqual(status, 0)
        self.assertIn(NO_GPU_MESSAGE, output)
        frank = self.record("frank")["labs"]
        self.assertEqual(frank["02_atomic"]["verdict"], "NOT_RUN")
        self.assertEqual(frank["03_shared_atomic"]["verdict"], "COMPILE_ERROR")
        self.assertEqual(frank["10_two_step"]["verdict"], "MISSING")
        self.assertEqual(frank["01_host_sum"]["verdict"], "PASSED")
        self.assertEqual(self.record("dave")["labs"]["01_host_sum"]["detail"], "not implemented yet")
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
        self.assertEqual((rows["alice"]["01_host_sum"], rows["alice"]["02_atomic"], rows["alice"]["total"]),
                         ("10", "", ""))
        self.assertEqual(rows["frank"]["03_shared_atomic"], "0")
        alice_row = next(line for line in output.splitlines() if line.startswith("alice "))
        self.assertIn(" N ", alice_row + " ", "the summary table's letter for a lab not run")
        # The class report says the same, and why no figure: the run was asked for none.
        self.assertIn(f"report: {self.out / 'report' / 'index.html'}", output)
        page = (self.out / "report" / "index.html").read_text(encoding="utf-8")
        self.assertIn("no plots (not asked for)", page)
        self.assertEqual(page.count('<tr data-name="'), len(rows), "a gradebook row per student")
        alice = (self.out / "report" / "students" / "alice.html").read_text(encoding="utf-8")
        self.assertIn("not run (no GPU)", alice)
        self.assertIn("incomplete: left blank", alice)

    def test_without_compute_sanitizer_there_is_no_penalty_and_the_summary_says_so(self):
        status, output = self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out),
                                       "--student", "erin"], FakeToolchain(self.expected, sanitizer=False))
        self.assertEqual(status, 0)
        self.assertIn("sanitizer not available", output)
        lab = self.record("erin")["labs"]["07_last_warp"]
        self.assertEqual((lab["sanitizer"]["status"], lab["score"]["correctness"]), ("sanitizer not available", 10.0))

    def test_self_check_grades_one_labs_folder_and_fails_unless_all_pass(self):
        labs = Path(self.tmp.name) / "labs"
        shutil.copytree(SUBMISSIONS / "alice" / "labs", labs)
        status, output = self.run_cli(["--self", str(labs), "--build-dir", "unused", "--out", str(self.out)],
                                      FakeToolchain({}))
        self.assertEqual(status, 0, output)
        (labs / "05_sequential" / "sequential.cu").write_text("no markers here\n", encoding="utf-8")
        status, output = self.run_cli(["--self", str(labs), "--build-dir", "unused", "--out", str(self.out)],
                                      FakeToolchain({}))
        self.assertEqual(status, 1)
        self.assertIn("05_sequential: COMPILE_ERROR", output)
        self.assertIn("BEGIN STUDENT CODE", output)

    def test_a_self_check_without_a_gpu_is_incomplete_not_failed(self):
        labs = Path(self.tmp.name) / "labs"
        shutil.copytree(SUBMISSIONS / "alice" / "labs", labs)
        status, output = self.run_cli(["--self", str(labs), "--build-dir", "unused", "--out", str(self.out)],
                                      FakeToolchain({}, gpu=False))
        self.assertEqual(status, ExitStatus.INCOMPLETE, output)
        self.assertIn("self-check incomplete", output)

    def test_students_whose_names_differ_only_in_odd_characters_never_share_a_file(self):
        class_dir = Path(self.tmp.name) / "class"
        names = ["a+b", "a_b", "a@b", "A+b", "a.b"]
        for name in names:
            shutil.copytree(SUBMISSIONS / "alice", class_dir / name)
        status, output = self.run_cli([str(class_dir), "--build-dir", "unused", "--out", str(self.out), "--labs",
                                       "01,02"], FakeToolchain({}))
        self.assertEqual(status, 0, output)
        records = {json.loads(p.read_text(encoding="utf-8"))["student"]: p.name
                   for p in (self.out / "students").glob("*.json")}
        self.assertEqual(sorted(records), sorted(names))
        self.assertEqual(records["a+b"], "a%2Bb.json")
        self.assertEqual(len(set(records.values())), len(names))
        self.assertEqual(sorted(p.name for p in (self.out / "gradescope").iterdir()),
                         sorted(student_file_name(name) for name in names))
        self.assertEqual(sorted(p.name for p in (self.out / "work").iterdir() if not p.name.startswith(".")),
                         sorted(student_file_name(name) for name in names))
        self.assertEqual(sorted(p.stem for p in (self.out / "work" / ".claims").iterdir()),
                         sorted(student_file_name(name) for name in names))
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            self.assertEqual(sorted(row[0] for row in list(csv.reader(handle))[1:]), sorted(names))

    def test_gradescope_says_not_run_without_a_gpu_and_gets_no_score(self):
        self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--student", "alice"],
                     FakeToolchain(self.expected, gpu=False))
        data = json.loads((self.out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))
        lab02 = next(test for test in data["tests"] if test["name"].startswith("02_atomic"))
        self.assertNotIn("status", lab02)
        self.assertIn("not run", lab02["name"])
        self.assertIn("Not run (no GPU", data["output"])
        # An incomplete grading uploads no score: none on the file, none on a test (Gradescope would
        # sum the tests' scores into one); the output says it is no grade, and a graded lab its points.
        self.assertIsNone(self.record("alice")["total"])
        self.assertNotIn("score", data)
        self.assertEqual([test["name"] for test in data["tests"] if "score" in test], [])
        self.assertTrue(data["output"].startswith("NOT A GRADE: this grading is incomplete and carries no score"),
                        data["output"])
        lab01 = next(test for test in data["tests"] if test["name"] == "01_host_sum")
        points = self.record("alice")["labs"]["01_host_sum"]["score"]["total"]
        self.assertIsNotNone(points)
        self.assertTrue(lab01["output"].startswith(f"{points:g} of 10 points (not a score"), lab01["output"])

    def test_grading_some_students_keeps_the_whole_class_in_the_gradebook(self):
        self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--student", "bob"],
                     FakeToolchain(self.expected))
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        self.assertEqual([row[0] for row in rows[1:]], [name for name, _ in students()])
        self.assertEqual(set(rows[1][1:]), {""}, "alice is not graded yet: a blank row")

    def test_a_seed_given_is_the_seed_used_and_the_self_check_uses_the_public_one(self):
        self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--student", "alice",
                      "--seed", "12345"], FakeToolchain(self.expected))
        self.assertEqual(self.record("alice")["seed"], "12345")
        labs = Path(self.tmp.name) / "labs"
        shutil.copytree(SUBMISSIONS / "alice" / "labs", labs)
        self.run_cli(["--self", str(labs), "--build-dir", "unused", "--out", str(self.out)], FakeToolchain({}))
        self.assertEqual(self.record("self")["seed"], str(PUBLIC_SEED))

    def test_an_unsandboxed_grading_says_so_in_every_output(self):
        toolchain = FakeToolchain(self.expected)
        toolchain.sandbox_status = lambda: "UNSANDBOXED: not root"
        self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--student", "alice"],
                     toolchain)
        with open(self.out / "gradebook.csv", newline="", encoding="utf-8") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
        self.assertEqual(rows["alice"]["sandbox"], "UNSANDBOXED: not root")
        self.assertTrue((self.out / "UNSANDBOXED.txt").is_file())
        gradescope = json.loads((self.out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))
        self.assertIn("UNSANDBOXED", gradescope["output"])
        self.assertIn("UNSANDBOXED", (self.out / "junit.xml").read_text(encoding="utf-8"))

    def test_labs_and_student_selection(self):
        status, _ = self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--labs",
                                  "01,05", "--student", "carol,dave", "--no-bench", "--no-sanitizer"],
                                 FakeToolchain(self.expected))
        self.assertEqual(status, 0)
        self.assertEqual(sorted(p.stem for p in (self.out / "students").glob("*.json")), ["carol", "dave"])
        self.assertEqual(list(self.record("carol")["labs"]), ["01_host_sum", "05_sequential"])
        with open(self.out / "gradebook.csv", encoding="utf-8") as handle:
            self.assertEqual(handle.readline().strip(), "student,01_host_sum,05_sequential,total")

    def test_an_unknown_lab_is_a_usage_error(self):
        status, _ = self.run_cli([str(SUBMISSIONS), "--build-dir", "unused", "--out", str(self.out), "--labs", "42"],
                                 FakeToolchain(self.expected))
        self.assertEqual(status, 2)


if __name__ == "__main__":
    unittest.main()
