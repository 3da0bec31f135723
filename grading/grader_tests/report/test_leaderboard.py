"""Gradescope leaderboard entries: the policy switch, one entry per lab with a usable timing (its
ratio from the record), none for a lab without one, and the example class graded end to end."""

import json
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, FakeToolchain, expected_class, fake_manifest, write_example_class
from grader.report import reports
from grader.outputs import signing
from grader.stages.engine import Grader, Options
from grader.manifest import GraderError
from grader.run.merge import merge
from grader.policy import Policy
from grader.outputs.records import LabBenchmark, LabRecord, LabScore, StudentRecord


def lab(folder, verdict, ratio=None, impossible=False):
    return LabRecord(folder, "x.cu", "m", verdict=verdict, benchmark=LabBenchmark(ratio=ratio, impossible=impossible),
                     score=LabScore(total=1.0, max=20.0))


def record():
    return StudentRecord("ann", complete=True, total=4.0, max_total=100.0, labs={
        "02_atomic": lab("02_atomic", "PASSED", 1.0312),
        "03_shared_atomic": lab("03_shared_atomic", "PASSED", 2.5),
        "04_interleaved": lab("04_interleaved", "WRONG_ANSWER"),
        "05_sequential": lab("05_sequential", "NOT_RUN"),
        "06_first_add": lab("06_first_add", "PASSED"),                        # passed, no timing
        "07_last_warp": lab("07_last_warp", "PASSED", 0.2, impossible=True),  # below the read roof
        "08_complete_unroll": lab("08_complete_unroll", "TIMEOUT", 3.0),       # a ratio never counts unless PASSED
    })


class TestPolicySwitch(unittest.TestCase):
    def test_off_by_default_and_in_the_shipped_policy(self):
        self.assertIs(Policy.load(None).gradescope.leaderboard, False)
        self.assertIs(Policy.load(GRADING / "policy.toml").gradescope.leaderboard, False)

    def test_on_when_asked(self):
        self.assertIs(Policy.from_dict({"gradescope": {"leaderboard": True}}).gradescope.leaderboard, True)

    def test_a_typo_or_a_non_boolean_is_an_error(self):
        with self.assertRaises(GraderError):
            Policy.from_dict({"gradescope": {"leaderbord": True}})
        with self.assertRaises(GraderError):
            Policy.from_dict({"gradescope": {"leaderboard": "yes"}})


class TestEntries(unittest.TestCase):
    def test_no_leaderboard_key_when_off(self):
        self.assertNotIn("leaderboard", reports.gradescope_results(record()))
        self.assertNotIn("leaderboard", reports.gradescope_results(record(), leaderboard=False))

    def test_one_entry_per_lab_that_passed_with_a_usable_ratio(self):
        entries = reports.gradescope_results(record(), leaderboard=True)["leaderboard"]
        self.assertEqual(entries, [
            {"name": "02_atomic time / reference", "value": 1.031, "order": "asc"},
            {"name": "03_shared_atomic time / reference", "value": 2.5, "order": "asc"},
        ])

    def test_a_student_without_timings_gets_an_empty_leaderboard(self):
        quiet = StudentRecord("bea", complete=True, labs={"02_atomic": lab("02_atomic", "NOT_RUN")})
        self.assertEqual(reports.gradescope_results(quiet, leaderboard=True)["leaderboard"], [])


class TestExampleClass(unittest.TestCase):
    """The example class graded with the simulated toolchain; the class outputs rebuilt with the
    switch on: every entry is the ratio in the student's own record."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        submissions = write_example_class(root / "class")
        manifest = fake_manifest(root / "build")
        cls.out = root / "out"
        grader = Grader(manifest, Policy.load(GRADING / "policy.toml"), FakeToolchain(expected_class()["students"]),
                        cls.out, Options(labs=manifest.labs, jobs=2), log=lambda text: None)
        students = [(p.name, p) for p in sorted(submissions.iterdir()) if p.is_dir()]
        grader.grade_class(students)
        cls.names = [name for name, _ in students]
        cls.before = {name: cls.results(name) for name in cls.names}
        reports.write_class_outputs(cls.out, manifest.labs, cls.names, signing.load_key(cls.out), leaderboard=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def results(cls, name):
        return json.loads((cls.out / "gradescope" / name / "results.json").read_text(encoding="utf-8"))

    def test_the_switch_reaches_a_grading_and_a_merge(self):
        root = Path(self.tmp.name)
        manifest, out = fake_manifest(root / "build"), root / "switched"
        policy = Policy.from_dict({"gradescope": {"leaderboard": True}})
        alice = [(name, path) for name, path in
                 ((p.name, p) for p in sorted((root / "class").iterdir()) if p.is_dir()) if name == "alice"]
        Grader(manifest, policy, FakeToolchain(expected_class()["students"]), out, Options(labs=manifest.labs, jobs=2),
               log=lambda text: None).grade_class(alice)
        graded = json.loads((out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))
        self.assertTrue(graded.get("leaderboard"), "grading with the switch on wrote no leaderboard")
        (out / "gradescope" / "alice" / "results.json").unlink()
        merge(out, manifest.labs, ["alice"], plots=False, leaderboard=True)
        merged = json.loads((out / "gradescope" / "alice" / "results.json").read_text(encoding="utf-8"))
        self.assertEqual(merged["leaderboard"], graded["leaderboard"])

    def test_the_shipped_policy_writes_no_leaderboard(self):
        for name, data in self.before.items():
            self.assertNotIn("leaderboard", data, name)

    def test_entries_are_the_records_ratios(self):
        counted = 0
        for name in self.names:
            saved = json.loads((self.out / "students" / f"{name}.json").read_text(encoding="utf-8"))
            want = {f"{folder} time / reference": round(entry["benchmark"]["ratio"], 3)
                    for folder, entry in saved["labs"].items()
                    if entry["verdict"] == "PASSED" and entry["benchmark"]["ratio"] is not None}
            got = {e["name"]: e["value"] for e in self.results(name)["leaderboard"]}
            self.assertEqual(got, want, name)
            self.assertTrue(all(e["order"] == "asc" for e in self.results(name)["leaderboard"]))
            counted += len(got)
        self.assertGreater(counted, 30)  # the fake times every passing lab

    def test_slow_labs_rank_below_reference_quality_ones(self):
        alice = {e["name"]: e["value"] for e in self.results("alice")["leaderboard"]}
        bob = {e["name"]: e["value"] for e in self.results("bob")["leaderboard"]}
        self.assertGreater(bob["05_sequential time / reference"], alice["05_sequential time / reference"])

    def test_failed_labs_have_no_entry(self):
        frank = {e["name"] for e in self.results("frank")["leaderboard"]}
        self.assertNotIn("03_shared_atomic time / reference", frank)   # COMPILE_ERROR
        self.assertNotIn("10_two_step time / reference", frank)        # MISSING


if __name__ == "__main__":
    unittest.main()
