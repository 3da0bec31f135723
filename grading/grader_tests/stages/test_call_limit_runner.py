"""The call limit that grows with the input (grader/judge/call_limit.py), through the real runner in
the real sandbox (bubblewrap, as root; skipped elsewhere), judged by the real checker: a lab 01 whose
call never returns (a fixture) is stopped at about the limit's floor on a small input, the checker
says how many elements that case's limit counted, and the TIMEOUT's words give that limit."""

import time
import unittest

from grader_tests.real_runner import LAB01, RealRunnerCase
from grader.contract import RUNNER_EXIT_WATCHDOG
from grader.judge.call_limit import CallLimit
from grader.judge.verdicts import TIMEOUT, test_verdict


class CallLimitThroughTheRunner(RealRunnerCase):
    MODULES = ("REDUCTION_NEVER_RETURNS_MODULE",)

    def test_a_call_that_never_returns_on_a_small_input_ends_at_the_floor(self):
        plan, cache = self.lab01_plan("int mixed_sign 33")
        limit = CallLimit(full_s=60.0, floor_s=0.5)
        started = time.monotonic()
        process, check = self.tools.run_tests("amy", LAB01, self.paths["REDUCTION_NEVER_RETURNS_MODULE"], plan, cache,
                                              120, limit)
        took = time.monotonic() - started
        self.assertEqual(process.returncode, RUNNER_EXIT_WATCHDOG, process.stderr[-2000:])
        self.assertFalse(process.stalled)
        # the floor (0.5 s) and the runner's start, nowhere near the full 60 s (nor the 70 s stall)
        self.assertLess(took, 20.0)
        self.assertEqual((check.observed, check.last_started, check.last_started_elements), (0, "c001", 33), check)
        verdict = test_verdict(check, process, limit)
        self.assertEqual(verdict.verdict, TIMEOUT)
        self.assertIn("0.5 s, the limit of a call on 33 elements", verdict.detail)

    def test_without_a_floor_the_call_gets_the_whole_limit(self):
        plan, cache = self.lab01_plan("int mixed_sign 33")
        started = time.monotonic()
        process, check = self.tools.run_tests("amy", LAB01, self.paths["REDUCTION_NEVER_RETURNS_MODULE"], plan, cache,
                                              120, CallLimit(full_s=3.0))
        took = time.monotonic() - started
        self.assertEqual(process.returncode, RUNNER_EXIT_WATCHDOG, process.stderr[-2000:])
        self.assertGreaterEqual(took, 3.0)
        self.assertIn("within 3 s", test_verdict(check, process, CallLimit(3.0)).detail)


if __name__ == "__main__":
    unittest.main()
