"""Verdicts from canned test-runner and compute-sanitizer outputs (fixtures/*.txt)."""

import unittest

from grader_tests.helpers import fixture
from grader.verdicts import (COMPILE_ERROR, NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT, WRONG_ANSWER,
                             sanitizer_finding, test_verdict)


class TestRunnerVerdicts(unittest.TestCase):
    def test_a_complete_passing_run_is_passed(self):
        self.assertEqual(test_verdict(fixture("pass")).verdict, PASSED)

    def test_a_gtest_failure_gives_wrong_answer_with_the_first_failure_block(self):
        verdict = test_verdict(fixture("wrong_answer"))
        self.assertEqual(verdict.verdict, WRONG_ANSWER)
        failure = verdict.first_failure
        self.assertEqual(failure.test, "Small.int_uniform_positive_n1")
        self.assertEqual(failure.case, "lab 01_host_sum (host sum), n = 1, type = int, pattern = uniform_positive, "
                                       "seed = 20261121")
        self.assertEqual(failure.expected, "expected 75, got 0 (difference -75)")
        self.assertTrue(failure.hint.startswith("the result is 0: no element reached the output"))
        self.assertEqual(verdict.failed_tests, 133)
        for part in ("Small.int_uniform_positive_n1", "n = 1, type = int", "expected 75, got 0", "hint: the result is 0"):
            self.assertIn(part, verdict.detail)

    def test_the_skeleton_placeholder_is_wrong_answer_not_implemented_yet(self):
        verdict = test_verdict(fixture("not_implemented"))
        self.assertEqual((verdict.verdict, verdict.detail), (WRONG_ANSWER, "not implemented yet"))

    def test_a_failure_without_the_suite_layout_keeps_its_message(self):
        verdict = test_verdict(fixture("contract_failure"))
        self.assertEqual(verdict.verdict, WRONG_ANSWER)
        self.assertEqual(verdict.first_failure.test, "Lab01.FloatAccumulatorDriftsWhereKahanDoesNot")
        self.assertTrue(verdict.first_failure.hint.startswith("host_sum<float> must be the plain loop"))

    def test_the_watchdog_marker_is_a_timeout(self):
        verdict = test_verdict(fixture("timeout"))
        self.assertEqual(verdict.verdict, TIMEOUT)
        self.assertIn("did not finish within 2 s", verdict.detail)
        self.assertIn("n = 1, type = int", verdict.detail)

    def test_the_graders_own_time_limit_is_a_timeout(self):
        verdict = test_verdict(fixture("pass", timed_out=True, timeout_s=300))
        self.assertEqual(verdict.verdict, TIMEOUT)
        self.assertIn("300 s", verdict.detail)

    def test_the_runtime_error_marker_is_a_runtime_error_with_its_message(self):
        verdict = test_verdict(fixture("runtime_error"))
        self.assertEqual(verdict.verdict, RUNTIME_ERROR)
        self.assertIn("boom", verdict.detail)
        self.assertIn("n = 33", verdict.detail)

    def test_exit_from_lab_code_is_a_runtime_error(self):
        verdict = test_verdict(fixture("exit_atexit"))
        self.assertEqual(verdict.verdict, RUNTIME_ERROR)
        self.assertIn("exit() called from lab code", verdict.detail)
        self.assertIn("Contract.EmptyInputGivesZero_int", verdict.detail)

    def test_status_0_without_tests_complete_never_passes(self):
        verdict = test_verdict(fixture("exit_without_complete"))
        self.assertEqual(verdict.verdict, RUNTIME_ERROR)
        self.assertIn("before the tests finished", verdict.detail)

    def test_a_signal_is_a_runtime_error_naming_it_and_the_running_test(self):
        verdict = test_verdict(fixture("signal"))
        self.assertEqual(verdict.verdict, RUNTIME_ERROR)
        self.assertIn("SIGSEGV", verdict.detail)
        self.assertIn("Small.int_uniform_positive_n33", verdict.detail)

    def test_status_77_is_not_run(self):
        self.assertEqual(test_verdict(fixture("no_gpu")).verdict, NOT_RUN)

    def test_a_module_that_does_not_load_is_a_compile_error(self):
        verdict = test_verdict(fixture("load_error"))
        self.assertEqual(verdict.verdict, COMPILE_ERROR)
        self.assertIn("undefined symbol", verdict.detail)


class TestSanitizerFindings(unittest.TestCase):
    def test_racecheck_hazards_are_counted_with_the_first_report_lines(self):
        finding = sanitizer_finding("racecheck", fixture("racecheck_hazard"))
        self.assertEqual((finding.status, finding.count), ("hazards", 2))
        self.assertTrue(finding.report[0].startswith("Error: Race reported between Write access"))

    def test_memcheck_errors_are_counted(self):
        finding = sanitizer_finding("memcheck", fixture("memcheck_error"))
        self.assertEqual((finding.status, finding.count), ("hazards", 223))
        self.assertEqual(finding.report[0], "Invalid __global__ read of size 4 bytes")

    def test_a_clean_run_has_no_hazard(self):
        finding = sanitizer_finding("memcheck", fixture("memcheck_clean"))
        self.assertEqual((finding.status, finding.count), ("clean", 0))

    def test_a_tool_that_could_not_run_is_an_error_not_a_hazard(self):
        finding = sanitizer_finding("synccheck", fixture("sanitizer_broken"))
        self.assertEqual((finding.status, finding.count), ("error", 0))

    def test_a_sanitizer_timeout_is_recorded_without_hazards(self):
        finding = sanitizer_finding("racecheck", fixture("memcheck_clean", timed_out=True, timeout_s=600))
        self.assertEqual((finding.status, finding.count), ("timeout", 0))


if __name__ == "__main__":
    unittest.main()
