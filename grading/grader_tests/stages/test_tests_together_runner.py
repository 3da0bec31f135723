"""The real runner over several labs, in the real sandbox (bubblewrap, as root; skipped elsewhere),
its report judged by the real checker one lab's part at a time (Toolchain.run_tests_labs). On a
machine without a GPU only the host lab runs: the lab 01 reference, then a second lab 01 module
(a fixture): the first part is judged on its own and closed by the second, and a second part for
the same lab is not believed (the fixture also writes into every descriptor it has, the report
channel's too: those lines are malformed, and counted)."""

import unittest

from grader_tests.real_runner import LAB01, RealRunnerCase


class RunnerOverSeveralLabs(RealRunnerCase):
    MODULES = ("REDUCTION_LOG_WRITER_MODULE",)

    def setUp(self):
        super().setUp()
        self.plan, self.cache = self.lab01_plan("int mixed_sign 33;float uniform_positive 1025")

    def test_each_part_is_judged_alone_and_a_second_part_of_one_lab_is_not_believed(self):
        labs = [(LAB01, self.paths["REDUCTION_LAB01_REFERENCE"], self.plan),
                (LAB01, self.paths["REDUCTION_LOG_WRITER_MODULE"], self.plan)]
        process, checks = self.tools.run_tests_labs("amy", labs, self.cache, 120, 60)
        self.assertEqual(process.returncode, 0, process.stderr[-2000:])
        check = checks["01_host_sum"]
        self.assertEqual((check.cases, check.observed, check.correct, check.end), (2, 2, 2, True), check)
        # counted: the second part (the same lab again), and the fixture's writes into the channel
        self.assertGreaterEqual(check.malformed, 1)
        self.assertEqual(check.forged, 0)
        self.assertEqual(process.report.count('"event":"lab"'), 2, process.report)


if __name__ == "__main__":
    unittest.main()
