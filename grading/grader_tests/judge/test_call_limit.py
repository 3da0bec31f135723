"""The call limit of a test run (grader/judge/call_limit.py): what the runner is told, how long a call
on n elements may take (the formula lab_runner.hpp's RunnerOptions::seconds_for enforces; its CPU
test, CallDeadline in grading/tests/cpu_tests.cpp, checks the same figures), and its words."""

import unittest

from grader.contract import CALL_FLOOR_FLAG, FULL_CALL_ELEMENTS
from grader.judge.call_limit import CallLimit


class CallLimitTest(unittest.TestCase):
    def test_it_grows_from_the_floor_to_the_full_limit_with_the_input_and_stays_there(self):
        limit = CallLimit(20.0, 2.0)
        self.assertEqual(limit.seconds_for(0), 2.0)
        self.assertAlmostEqual(limit.seconds_for(FULL_CALL_ELEMENTS // 2), 11.0)
        self.assertEqual(limit.seconds_for(FULL_CALL_ELEMENTS), 20.0)
        self.assertEqual(limit.seconds_for(FULL_CALL_ELEMENTS * 128), 20.0)
        self.assertTrue(limit.short_for(FULL_CALL_ELEMENTS - 1))
        self.assertFalse(limit.short_for(FULL_CALL_ELEMENTS))

    def test_without_a_floor_below_the_limit_every_call_gets_the_limit(self):
        for limit in (CallLimit(20.0), CallLimit(20.0, 20.0), CallLimit(20.0, 30.0), CallLimit.of(20)):
            self.assertEqual((limit.seconds_for(0), limit.short_for(0)), (20.0, False), limit)
            self.assertEqual(limit.argv(), ["--call-timeout=20"], limit)

    def test_the_runner_gets_the_floor_beside_the_limit(self):
        self.assertEqual(CallLimit(20.0, 2.5).argv(), ["--call-timeout=20", f"{CALL_FLOOR_FLAG}=2.5"])

    def test_a_shared_runs_cap_bounds_both_parts(self):
        self.assertEqual(CallLimit(20.0, 2.0).capped(2.0), CallLimit(2.0, 2.0))
        self.assertEqual(CallLimit(20.0, 1.0).capped(2.0), CallLimit(2.0, 1.0))
        self.assertEqual(CallLimit(20.0, 1.0).capped(2.0).argv(), ["--call-timeout=2", f"{CALL_FLOOR_FLAG}=1"])

    def test_its_words_name_the_cases_limit(self):
        self.assertEqual(CallLimit(20.0, 2.0).words(1), "2.0 s, the limit of a call on 1 element (2 s, growing with "
                                                        "the input to 20 s at 2^24 elements)")
        self.assertEqual(CallLimit(20.0, 2.0).words(FULL_CALL_ELEMENTS + 7), "20 s")
        self.assertEqual(CallLimit(20.0).words(1), "20 s")


if __name__ == "__main__":
    unittest.main()
