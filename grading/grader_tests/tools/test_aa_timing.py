"""grading/tools/aa_timing.py, the grader's A/A check: how a student run's ratio is taken from the trusted
runs around it, the summary, and (REDUCTION_CHECKER set by CTest) a real round of lab 01's reference
through the timekeeper, trusted on both sides (no sandbox uids: a grading beside it checks those)."""

import contextlib
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # grading/

from tools import aa_timing  # noqa: E402
from tools.aa_timing import STUDENT, TRUSTED, Run, ratios, summary  # noqa: E402
from grader.judge.checks import TimedItem  # noqa: E402
from grader.manifest import load_manifest  # noqa: E402
from grader.stages.toolchain import Toolchain  # noqa: E402

CELL = ("10_two_step", "float", 1 << 24)


class Ratios(unittest.TestCase):
    def test_a_student_run_is_held_against_the_mean_of_its_neighbours(self):
        runs = [Run(TRUSTED, {CELL: 40.0}), Run(STUDENT, {CELL: 42.0}), Run(TRUSTED, {CELL: 44.0}),
                Run(STUDENT, {CELL: 44.0}), Run(TRUSTED, {CELL: 44.0})]
        self.assertEqual(ratios(runs), {CELL: [1.0, 1.0]})

    def test_a_student_run_without_a_trusted_run_on_both_sides_gives_no_ratio(self):
        self.assertEqual(ratios([Run(TRUSTED, {CELL: 40.0}), Run(STUDENT, {CELL: 42.0})]), {})
        missing = [Run(TRUSTED, {CELL: 40.0}), Run(STUDENT, {CELL: 42.0}), Run(TRUSTED, {})]
        self.assertEqual(ratios(missing), {})

    def test_the_summary_gives_the_mean_the_spread_and_the_worst(self):
        text = summary({CELL: [0.99, 1.01], ("01_host_sum", "int", 8): [1.03]})
        self.assertIn("10_two_step float n=16777216: 0.9900 1.0100", text)
        self.assertIn("A/A over 3 ratios: mean 1.0100", text)
        self.assertIn("largest |ratio - 1| 3.00 %", text)
        self.assertIn("no ratio", summary({}))


class Calls(unittest.TestCase):
    def test_a_run_times_as_many_calls_as_the_policy_gives_a_grading_unless_told(self):
        with tempfile.TemporaryDirectory() as folder:
            policy = Path(folder) / "policy.toml"
            policy.write_text("[benchmark]\nsamples = 40\nhost_samples = 90\n", encoding="utf-8")
            args = aa_timing.parse_args(["--policy", str(policy)])
            self.assertEqual((aa_timing.samples_of(args, True), aa_timing.samples_of(args, False)), (90, 40))
            args = aa_timing.parse_args(["--policy", str(policy), "--samples", "12"])
            self.assertEqual((aa_timing.samples_of(args, True), aa_timing.samples_of(args, False)), (12, 12))


    def test_a_run_takes_the_grading_sizes_and_budgets_unless_told(self):
        with tempfile.TemporaryDirectory() as folder:
            policy = Path(folder) / "policy.toml"
            policy.write_text('[benchmark]\nsizes = ["2^22"]\nhost_sizes = ["2^18", "2^19"]\nmin_samples = 7\n'
                              'budget_ms = 50\nhost_budget_ms = 700\n', encoding="utf-8")
            args = aa_timing.parse_args(["--policy", str(policy)])
            self.assertEqual((aa_timing.sizes_of(args, True), aa_timing.sizes_of(args, False)),
                             ([1 << 18, 1 << 19], [1 << 22]))
            self.assertEqual(aa_timing.budget_of(args, True), {"min_samples": 7, "budget_ms": 700.0})
            self.assertEqual(aa_timing.budget_of(args, False), {"min_samples": 7, "budget_ms": 50.0})
            args = aa_timing.parse_args(["--policy", str(policy), "--sizes", "1000", "--samples", "5"])
            self.assertEqual(aa_timing.sizes_of(args, True), [1000])
            self.assertEqual(aa_timing.budget_of(args, True)["min_samples"], 5, "no more than the samples")


class Pooled(unittest.TestCase):
    def test_consecutive_runs_pool_their_calls_as_a_grading_does(self):
        calls = {CELL: [[1.0, 1.0, 1.1], [1.2, 1.2, 1.2], [0.9, 0.9, 0.9], [1.0, 1.0, 1.0], [5.0]]}
        pooled = aa_timing.pooled_ratios(calls, 2)[CELL]
        self.assertEqual([round(v, 9) for v in pooled], [1.15, 0.95], "the median of 6 calls; the fifth run makes no group")
        self.assertEqual(aa_timing.pooled_ratios(calls, 1)[CELL], [1.0, 1.2, 0.9, 1.0, 5.0])


class FirstCalls(unittest.TestCase):
    def test_a_runs_first_calls_give_the_ratio_a_shorter_run_would_have_given(self):
        def item(calls):
            return TimedItem("t001", "01_host_sum", "int", 8, len(calls), 1.0, 1.0, 1.0, 1.0, True, "",
                             calls_us=list(calls))
        student, reference = item([1.0, 1.0, 3.0, 3.0, 3.0]), item([1.0] * 5)
        self.assertEqual(aa_timing.first_calls_ratio(student, reference, 2), 1.0)
        self.assertEqual(aa_timing.first_calls_ratio(student, reference, 5), 3.0)
        self.assertEqual(aa_timing.first_calls_ratio(student, reference, 99), 3.0)
        self.assertEqual(student.calls_us, [1.0, 1.0, 3.0, 3.0, 3.0], "the run's own calls are left whole")

    def test_first_takes_a_list_of_calls(self):
        self.assertEqual(aa_timing.parse_args(["--first", "100,25,25"]).first, [25, 100])
        self.assertEqual(aa_timing.parse_args([]).first, [])
        for wrong in ("x", "0"):
            with self.subTest(first=wrong), self.assertRaises(SystemExit), \
                    contextlib.redirect_stderr(io.StringIO()):
                aa_timing.parse_args(["--first", wrong])


class RealRound(unittest.TestCase):
    def test_lab_01_through_the_timekeeper(self):
        checker = Path(os.environ.get("REDUCTION_CHECKER", "/nonexistent"))
        if not checker.is_file():
            self.skipTest("REDUCTION_CHECKER names no checker (run through ctest -R grader.unit)")
        manifest = load_manifest(checker.parents[2])
        lab = next(lab for lab in manifest.labs if lab.host)
        if not manifest.reference_module(lab).is_file() or not manifest.timekeeper.is_file():
            self.skipTest("this build has no lab 01 reference or no timekeeper")
        args = aa_timing.parse_args(["--rounds", "1", "--sizes", "2^16", "--types", "int", "--samples", "5",
                                     "--warmup", "1"])
        with tempfile.TemporaryDirectory(prefix="reduction-aa-test-") as work:
            os.chmod(work, 0o755)
            copies = aa_timing.copy_references(manifest, [lab], Path(work))
            runs = aa_timing.measure(Toolchain(manifest), manifest, [lab], args, Path(work), False, copies)
        self.assertEqual([run.side for run in runs], [TRUSTED, STUDENT, TRUSTED])
        for run in runs:
            self.assertGreater(run.medians.get((lab.folder, "int", 1 << 16), 0.0), 0.0)
        found = ratios(runs)
        self.assertEqual(len(found[(lab.folder, "int", 1 << 16)]), 1)


if __name__ == "__main__":
    unittest.main()
