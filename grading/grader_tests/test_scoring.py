"""The policy file and the points: the performance curve, no performance without correctness,
sanitizer penalties, NOT_RUN as blank."""

import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING
from grader.manifest import GraderError, Lab
from grader.policy import DEFAULTS, Policy
from grader.scoring import score_lab, student_total

LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")
LAB05 = Lab("05_sequential", "sequential.cu", "lab05_sequential")


def load(text: str) -> Policy:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.toml"
        path.write_text(text, encoding="utf-8")
        return Policy.load(path)


class TestPerformanceCurve(unittest.TestCase):
    def setUp(self):
        self.policy = Policy.load(None)

    def test_full_credit_up_to_1_2_times_the_reference(self):
        for ratio in (0.5, 1.0, 1.2):
            self.assertEqual(self.policy.performance_fraction(ratio), 1.0)

    def test_reference_over_time_above_1_2(self):
        self.assertAlmostEqual(self.policy.performance_fraction(2.0), 0.5)
        self.assertAlmostEqual(self.policy.performance_fraction(4.0), 0.25)
        self.assertAlmostEqual(self.policy.performance_fraction(10.0), 0.1)

    def test_nothing_beyond_10_times(self):
        self.assertEqual(self.policy.performance_fraction(10.01), 0.0)
        self.assertEqual(self.policy.performance_fraction(1000.0), 0.0)

    def test_the_three_knobs_are_configurable(self):
        policy = load('[performance]\nfull_credit_ratio = 1.5\nzero_credit_ratio = 4.0\nscale = "threshold"\n')
        self.assertEqual(policy.performance_fraction(1.5), 1.0)
        self.assertAlmostEqual(policy.performance_fraction(3.0), 0.5)
        self.assertEqual(policy.performance_fraction(4.5), 0.0)

    def test_the_median_of_the_ratios_by_default(self):
        self.assertEqual(self.policy.combine_ratios([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(self.policy.combine_ratios([1.0, 2.0]), 1.5)
        self.assertEqual(load('[performance]\nstatistic = "max"\n').combine_ratios([1.0, 2.0]), 2.0)


class TestPolicyFile(unittest.TestCase):
    def test_the_shipped_policy_loads_and_matches_the_defaults(self):
        self.assertEqual(Policy.load(GRADING / "policy.toml").data, DEFAULTS)

    def test_lab_01_has_no_performance_points_by_default(self):
        policy = Policy.load(None)
        self.assertEqual((policy.correctness_points(LAB01), policy.performance_points(LAB01)), (10.0, 0.0))
        self.assertEqual((policy.correctness_points(LAB05), policy.performance_points(LAB05)), (10.0, 10.0))

    def test_per_lab_points_by_folder_or_number(self):
        policy = load('[points]\nperformance = 6.0\n[labs.05]\ncorrectness = 15.0\n')
        self.assertEqual((policy.correctness_points(LAB05), policy.performance_points(LAB05)), (15.0, 6.0))
        self.assertEqual(policy.performance_points(LAB01), 0.0)  # the default lab 01 entry survives

    def test_an_unknown_key_is_an_error(self):
        with self.assertRaises(GraderError):
            load("[points]\ncorectness = 5\n")

    def test_an_inverted_curve_is_an_error(self):
        with self.assertRaises(GraderError):
            load("[performance]\nfull_credit_ratio = 5.0\nzero_credit_ratio = 2.0\n")


class TestLabScore(unittest.TestCase):
    def setUp(self):
        self.policy = Policy.load(None)

    def score(self, verdict, hazards=None, ratio=1.0, bench_ran=True, lab=LAB05):
        return score_lab(lab, self.policy, verdict, hazards or {}, ratio, bench_ran)

    def test_passed_and_fast_gets_everything(self):
        score = self.score("PASSED", ratio=1.1)
        self.assertEqual((score.correctness, score.performance, score.total, score.max),
                         (10.0, 10.0, 20.0, 20.0))

    def test_passed_and_slow_gets_proportional_performance(self):
        self.assertEqual(self.score("PASSED", ratio=4.0).total, 12.5)

    def test_no_performance_points_without_correctness(self):
        for verdict in ("WRONG_ANSWER", "TIMEOUT", "RUNTIME_ERROR", "COMPILE_ERROR", "MISSING"):
            score = self.score(verdict, ratio=1.0)
            self.assertEqual((score.correctness, score.performance, score.total), (0.0, 0.0, 0.0), verdict)

    def test_a_racecheck_hazard_costs_half_the_correctness_points(self):
        score = self.score("PASSED", {"racecheck": 3}, ratio=1.0)
        self.assertEqual((score.correctness, score.performance), (5.0, 10.0))
        self.assertTrue(any("racecheck" in note for note in score.notes))

    def test_penalties_add_up_to_at_most_all_the_correctness_points(self):
        score = self.score("PASSED", {"racecheck": 1, "memcheck": 2, "synccheck": 1}, ratio=1.0)
        self.assertEqual(score.correctness, 0.0)

    def test_a_tool_with_penalty_zero_only_reports(self):
        policy = load("[sanitizer.penalty]\nracecheck = 0.0\n")
        score = score_lab(LAB05, policy, "PASSED", {"racecheck": 2}, 1.0, True)
        self.assertEqual(score.correctness, 10.0)

    def test_not_run_is_blank_not_zero(self):
        score = self.score("NOT_RUN")
        self.assertEqual((score.correctness, score.performance, score.total), (None, None, None))

    def test_performance_not_measured_is_left_out_of_the_maximum(self):
        score = self.score("PASSED", ratio=None, bench_ran=False)
        self.assertEqual((score.performance, score.total, score.max), (None, 10.0, 10.0))

    def test_a_benchmark_without_a_timing_gives_no_performance_points(self):
        score = self.score("PASSED", ratio=None, bench_ran=True)
        self.assertEqual((score.performance, score.total, score.max), (0.0, 10.0, 20.0))

    def test_lab_01_is_correctness_only(self):
        score = self.score("PASSED", ratio=50.0, lab=LAB01)
        self.assertEqual((score.total, score.max), (10.0, 10.0))

    def test_the_total_is_blank_when_a_lab_was_not_run(self):
        scores = [self.score("PASSED", ratio=1.0), self.score("NOT_RUN")]
        self.assertEqual(student_total(scores), (None, 40.0))
        self.assertEqual(student_total(scores[:1]), (20.0, 20.0))


if __name__ == "__main__":
    unittest.main()
