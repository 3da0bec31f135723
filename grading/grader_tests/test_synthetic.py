"""The synthetic class (examples/synthetic_class.py via make_examples.py): deterministic by seed,
every student hands in every lab, every kind of honest variant present, and its expected verdicts
are the ones the grader gives (graded here with the simulated toolchain, checked by check_class)."""

import contextlib
import io
import re
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, example_script, fake_manifest, maker
from grader.outputs.student_names import name_problem
from grader.stages.engine import Grader, Options
from grader.policy import Policy
from grader.judge.submission import split_regions


checker = example_script("check_class")
make = maker()
KINDS = set(make.synthetic_class.WEIGHTS)


def synthetic(students=60, seed=1) -> dict:
    return make.expected_verdicts("synthetic", students=students, seed=seed)


class TestMixing(unittest.TestCase):
    def test_the_same_seed_gives_the_same_class_and_another_seed_another(self):
        self.assertEqual(make.build_class("synthetic", students=20, seed=5), make.build_class("synthetic", students=20, seed=5))
        self.assertNotEqual(synthetic(20, 5)["students"], synthetic(20, 6)["students"])

    def test_sixty_full_students_with_grader_safe_names(self):
        expected = synthetic()
        self.assertEqual(len(expected["students"]), 60)
        for name, row in expected["students"].items():
            self.assertIsNone(name_problem(name), name)
            self.assertEqual(list(row), expected["labs"], name)
            self.assertNotIn("MISSING", {entry["verdict"] for entry in row.values()}, name)

    def test_every_kind_is_present_from_seven_students_on(self):
        for students, seed in ((7, 1), (7, 99), (60, 1), (200, 3)):
            kinds = {entry["kind"] for row in synthetic(students, seed)["students"].values() for entry in row.values()}
            self.assertEqual(kinds, KINDS, (students, seed))

    def test_most_labs_are_reference_quality(self):
        counts = make.kind_counts(synthetic())
        self.assertGreater(counts["reference"], 0.8 * sum(counts.values()))

    def test_kinds_get_their_verdicts(self):
        want = {"reference": {"PASSED"}, "slow": {"PASSED"}, "wrong": {"WRONG_ANSWER"}, "hanging": {"TIMEOUT"},
                "racy": {"PASSED"}, "out_of_bounds": {"PASSED"}, "compile_error": {"COMPILE_ERROR"}}
        for row in synthetic(200, 2)["students"].values():
            for entry in row.values():
                self.assertIn(entry["verdict"], want[entry["kind"]], entry)
                self.assertEqual(bool(entry.get("slow")), entry["kind"] == "slow", entry)
                self.assertEqual(entry.get("hazards"), {"racy": ["racecheck"], "out_of_bounds": ["memcheck"]}.get(
                    entry["kind"]), entry)

    def test_only_the_synthetic_class_takes_students_and_seed(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as stop:
            make.main(["--class", "example", "--out", "/nonexistent/never-written", "--students", "3"])
        self.assertEqual(stop.exception.code, 2)


class TestWrittenClass(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.class_dir = Path(cls.tmp.name) / "synthetic"
        with contextlib.redirect_stdout(io.StringIO()):
            make.main(["--class", "synthetic", "--students", "12", "--seed", "4", "--out", str(cls.class_dir)])
        cls.expected = synthetic(12, 4)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def lab_file(self, name, folder):
        files = dict(make.course_labs())
        for path in (self.class_dir / name / "labs" / folder / files[folder], self.class_dir / name / folder / files[folder]):
            if path.is_file():
                return path
        self.fail(f"{name} did not hand in {folder}")

    def test_reference_labs_are_the_solution_and_the_typo_changes_one_name(self):
        for name, row in self.expected["students"].items():
            for folder, entry in row.items():
                region = split_regions(self.lab_file(name, folder).read_text(encoding="utf-8"), "x").region
                if entry["kind"] == "reference":
                    self.assertEqual(region.rstrip("\n"), make.solution_region(folder).rstrip("\n"), (name, folder))
        typo = make.planted_region("s", "02_atomic", "atomic.cu", make.TYPO)
        solution = make.solution_region("02_atomic")
        self.assertEqual(len(re.findall(r"\bnum_itmes\b", typo)), 1)
        self.assertEqual(len(re.findall(r"\bnum_items\b", typo)), len(re.findall(r"\bnum_items\b", solution)) - 1)

    def test_the_simulated_grading_gets_every_expected_verdict_and_points(self):
        out = Path(self.tmp.name) / "out"
        manifest = fake_manifest(Path(self.tmp.name) / "build")
        students = [(p.name, p) for p in sorted(self.class_dir.iterdir()) if p.is_dir()]
        grader = Grader(manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain(self.expected["students"]),
                        out, Options(labs=manifest.labs, jobs=2), log=lambda text: None)
        grader.grade_class(students)
        checks = checker.check(self.class_dir, out, False, None, None)
        self.assertEqual([c.what + ": " + c.detail for c in checks if not c.ok], [])
        self.assertGreater(len(checks), 12 * 10)


if __name__ == "__main__":
    unittest.main()
