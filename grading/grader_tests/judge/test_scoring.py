"""The policy file and the points: the performance curve, no performance without correctness,
sanitizer penalties, NOT_RUN as blank, bonus labs on top of the maximum."""

import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING
from grader.manifest import GraderError, Lab
from grader.policy import Policy
from grader.policy_file import render
from grader.judge.scoring import score_lab, student_total

LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")
LAB05 = Lab("05_sequential", "sequential.cu", "lab05_sequential")
LAB11 = Lab("11_single_pass", "single_pass.cu", "lab11_single_pass")
LAB12 = Lab("12_any_operator", "any_operator.cu", "lab12_any_operator")


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
        self.assertEqual(Policy.load(GRADING / "policy.toml"), Policy())

    def test_the_shipped_policy_is_the_rendering_of_the_settings(self):
        self.assertEqual((GRADING / "policy.toml").read_text(encoding="utf-8"), render(),
                         "grading/policy.toml is rendered from grader/settings.py: "
                         "cd grading && python3 -m grader.policy_file > policy.toml")

    def test_a_changed_default_shows_in_the_rendering(self):
        policy = Policy.from_dict({"benchmark": {"samples": 31}})
        self.assertNotEqual(policy, Policy())
        self.assertIn("samples = 25 ", render())

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

    def test_the_host_labs_calls_are_a_setting_of_their_own_in_the_same_range_as_the_samples(self):
        self.assertEqual(load("[benchmark]\nhost_samples = 50\n").benchmark.host_samples, 50)
        for wrong in ("4", "1001", "true", "100.0"):
            with self.subTest(host_samples=wrong), self.assertRaisesRegex(GraderError, "host_samples"):
                load(f"[benchmark]\nhost_samples = {wrong}\n")


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


class TestBonusLabs(unittest.TestCase):
    """Labs 11 and 12 are bonus labs by default: scored like any lab, left out of the maximum."""

    def setUp(self):
        self.policy = Policy.load(None)

    def scores(self, policy, verdicts):
        return [score_lab(lab, policy, verdict, {}, 1.0, True) for lab, verdict in verdicts]

    def test_labs_11_and_12_are_bonus_labs_by_default(self):
        self.assertEqual([self.policy.is_bonus(lab) for lab in (LAB01, LAB05, LAB11, LAB12)],
                         [False, False, True, True])
        self.assertTrue(Policy.load(GRADING / "policy.toml").is_bonus(LAB11))

    def test_a_bonus_lab_is_scored_like_any_lab_and_says_so(self):
        score = score_lab(LAB11, self.policy, "PASSED", {}, 1.0, True)
        self.assertEqual((score.correctness, score.performance, score.total, score.max, score.bonus),
                         (10.0, 10.0, 20.0, 20.0, True))
        self.assertTrue(any("bonus" in note for note in score.notes))
        self.assertFalse(score_lab(LAB05, self.policy, "PASSED", {}, 1.0, True).bonus)

    def test_the_total_includes_bonus_points_and_the_maximum_leaves_them_out(self):
        scores = self.scores(self.policy, [(LAB01, "PASSED"), (LAB05, "PASSED"), (LAB11, "PASSED"), (LAB12, "PASSED")])
        self.assertEqual(student_total(scores), (70.0, 30.0))

    def test_a_missed_bonus_lab_costs_nothing(self):
        scores = self.scores(self.policy, [(LAB05, "PASSED"), (LAB11, "MISSING"), (LAB12, "WRONG_ANSWER")])
        self.assertEqual(student_total(scores), (20.0, 20.0))

    def test_a_bonus_lab_not_run_leaves_the_total_blank_as_any_lab(self):
        scores = self.scores(self.policy, [(LAB05, "PASSED"), (LAB11, "NOT_RUN")])
        self.assertEqual(student_total(scores), (None, 20.0))
        self.assertTrue(scores[1].bonus)

    def test_bonus_is_configurable_by_folder_or_number(self):
        for text in ("[labs.11_single_pass]\nbonus = false\n", "[labs.11]\nbonus = false\n"):
            policy = load(text)
            self.assertFalse(policy.is_bonus(LAB11), text)
            self.assertTrue(policy.is_bonus(LAB12), text)  # the other default survives
            scores = self.scores(policy, [(LAB05, "PASSED"), (LAB11, "PASSED")])
            self.assertEqual(student_total(scores), (40.0, 40.0), text)
        self.assertTrue(load("[labs.05]\nbonus = true\n").is_bonus(LAB05))

    def test_points_and_bonus_mix_in_one_table(self):
        policy = load("[labs.11_single_pass]\ncorrectness = 5.0\n")
        self.assertTrue(policy.is_bonus(LAB11))
        self.assertEqual(policy.correctness_points(LAB11), 5.0)

    def test_bonus_must_be_a_boolean(self):
        with self.assertRaises(GraderError):
            load('[labs.11_single_pass]\nbonus = "yes"\n')
        with self.assertRaises(GraderError):
            load("[labs.11_single_pass]\nbonsu = true\n")


if __name__ == "__main__":
    unittest.main()
