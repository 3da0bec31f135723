"""Verdicts from canned checker reports and process results (sanitizer findings: test_sanitizer_findings)."""

import json
import unittest

from grader_tests import helpers  # noqa: F401  (puts grading/ on the path)
from grader.judge.checks import CheckError, TestCheck, WITHHELD, parse_test_check, quote_module_message
from grader.contract import REPORT_VERSION, RUNNER_EXIT_WATCHDOG
from grader.judge.call_limit import CallLimit
from grader.sandbox.process import ProcessResult
from grader.judge.verdicts import COMPILE_ERROR, PASSED, RUNTIME_ERROR, TIMEOUT, WRONG_ANSWER, test_verdict

CASES = 166
WHAT = "lab 05_sequential, n = 33, type = int, pattern = mixed_sign, seed = 99"
CUDA_MESSAGE = ("/home/s/two_step.cu:88: cudaMemcpy(d_out, ...) failed: cudaErrorIllegalAddress "
                "(an illegal memory access was encountered)")


def check(**fields) -> TestCheck:
    base = {"lab": "05_sequential", "seed": "99", "cases": CASES, "observed": CASES}
    return TestCheck(**{**base, **fields})


def verdict(report: TestCheck, run: ProcessResult | None = None, limit: CallLimit = CallLimit(20.0, 2.0)):
    return test_verdict(report, run or ProcessResult(0), limit)


class TestRunnerVerdicts(unittest.TestCase):
    def test_every_case_observed_and_right_passes_whatever_the_exit_status(self):
        for status in (0, 1, 77, 3):
            self.assertEqual(verdict(check(correct=CASES, end=True), ProcessResult(status)).verdict, PASSED)

    def test_an_exit_status_or_a_marker_alone_never_passes(self):
        for status in (0, 77):
            result = verdict(check(observed=0), ProcessResult(status, stdout="REDUCTION-TESTS-COMPLETE\n"))
            self.assertEqual(result.verdict, RUNTIME_ERROR, status)

    def test_a_wrong_case_gives_wrong_answer_with_the_first_failure_and_the_seed_to_replay(self):
        failure = {"case": "c017", "what": WHAT, "expected": "75", "got": "0", "hint": "the result is 0"}
        result = verdict(check(correct=CASES - 2, wrong=2, end=True, first_failure=failure))
        self.assertEqual(result.verdict, WRONG_ANSWER)
        for part in ("2 of 166 cases failed", WHAT, "expected 75, got 0", "hint: the result is 0", "--seed 99"):
            self.assertIn(part, result.detail)

    def test_the_skeleton_placeholder_is_not_implemented_yet(self):
        result = verdict(check(not_implemented=CASES, end=True))
        self.assertEqual((result.verdict, result.detail), (WRONG_ANSWER, "not implemented yet"))

    def test_no_progress_within_a_calls_time_is_a_timeout_naming_the_case(self):
        result = verdict(check(observed=40, correct=40, last_started="c041", last_started_what=WHAT),
                         ProcessResult(-9, stalled=True))
        self.assertEqual(result.verdict, TIMEOUT)
        self.assertIn("within 20 s", result.detail)
        self.assertIn(WHAT, result.detail)

    def test_the_runners_watchdog_names_the_limit_of_the_case_it_stopped(self):
        stopped = check(observed=40, correct=40, last_started="c041", last_started_what=WHAT, last_started_elements=33)
        result = verdict(stopped, ProcessResult(RUNNER_EXIT_WATCHDOG))
        self.assertEqual(result.verdict, TIMEOUT)
        self.assertIn("one call did not finish within 2.0 s, the limit of a call on 33 elements (2 s, growing with "
                      f"the input to 20 s at 2^24 elements) (during {WHAT})", result.detail)
        self.assertIn("within 20 s (during", verdict(stopped, ProcessResult(RUNNER_EXIT_WATCHDOG), CallLimit(20.0)).detail)

    def test_the_graders_wall_clock_limit_is_a_timeout(self):
        result = verdict(check(observed=3, correct=3), ProcessResult(-9, timed_out=True, timeout_s=300))
        self.assertEqual(result.verdict, TIMEOUT)
        self.assertIn("300 s", result.detail)

    def test_the_runners_own_deadline_is_a_timeout_only_with_cases_missing(self):
        self.assertEqual(verdict(check(observed=5, correct=5), ProcessResult(124)).verdict, TIMEOUT)
        self.assertEqual(verdict(check(correct=CASES), ProcessResult(124)).verdict, PASSED)

    def test_an_early_end_is_a_runtime_error_naming_the_case_and_a_signal(self):
        result = verdict(check(observed=2, correct=2, last_started="c003", last_started_what=WHAT), ProcessResult(0))
        self.assertEqual(result.verdict, RUNTIME_ERROR)
        self.assertIn("exit() called from lab code", result.detail)
        self.assertIn(WHAT, result.detail)
        crashed = verdict(check(observed=2, correct=2), ProcessResult(139))
        self.assertIn("SIGSEGV", crashed.detail)

    def test_a_cuda_error_is_quoted_by_name_and_any_other_message_is_withheld(self):
        result = verdict(check(observed=3, correct=2, error_case="c003", error_message=CUDA_MESSAGE,
                               last_started_what=WHAT))
        self.assertEqual(result.verdict, RUNTIME_ERROR)
        self.assertIn("cudaErrorIllegalAddress (an illegal memory access was encountered) at two_step.cu:88",
                      result.detail)
        self.assertNotIn("/home/s", result.detail)
        secret = verdict(check(observed=3, correct=2, error_case="c003", error_message="root:x:0:0:root:/root:/bin/bash"))
        self.assertNotIn("root:x", secret.detail)
        self.assertIn(WITHHELD, secret.detail)

    def test_a_module_claiming_another_lab_or_not_loading_is_a_compile_error(self):
        self.assertEqual(verdict(check(observed=0, refused="the module says it is lab 02_atomic")).verdict,
                         COMPILE_ERROR)
        self.assertEqual(verdict(check(observed=0, load_error="undefined symbol: x")).verdict, COMPILE_ERROR)

    def test_a_flood_is_a_runtime_error(self):
        result = verdict(check(observed=7, correct=7), ProcessResult(153, output_limit=True))
        self.assertEqual(result.verdict, RUNTIME_ERROR)
        self.assertIn("more output than the grader accepts", result.detail)


class TestCheckReports(unittest.TestCase):
    def test_a_report_of_another_format_or_version_is_refused(self):
        for text in ("", "not json", json.dumps({"format": "reduction-check-tests", "version": REPORT_VERSION + 1}),
                     json.dumps({"format": "other", "version": REPORT_VERSION})):
            with self.assertRaises(CheckError):
                parse_test_check(text)

    def test_a_report_is_read_field_by_field(self):
        report = parse_test_check(json.dumps({"format": "reduction-check-tests", "version": REPORT_VERSION, "cases": 3,
                                              "observed": 3, "correct": 3, "unknown_future_field": 1}))
        self.assertTrue(report.all_correct)

    def test_module_messages_keep_only_the_harness_shapes(self):
        self.assertEqual(quote_module_message("lab 05: not implemented yet (write your code between the STUDENT "
                                              "CODE markers)"),
                         "lab 05: not implemented yet (write your code between the STUDENT CODE markers)")
        self.assertIn(WITHHELD, quote_module_message("HOME=/root PATH=/usr/bin"))


if __name__ == "__main__":
    unittest.main()
