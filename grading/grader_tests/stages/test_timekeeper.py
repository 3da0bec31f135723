"""The timekeeper's clock against the times a worker claims: the grader's rule (benchmark.clock_problem),
and the real timekeeper, worker and checker timing a host lab end to end (no GPU needed: lab 01 runs on
the host; REDUCTION_CHECKER, set by CTest, names the build's checker, next to the timekeeper)."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.stages.benchmark import clock_problem
from grader.judge.checks import TimedItem
from grader.manifest import load_manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.stages.toolchain import Toolchain


def item(median_us: float, excess_us: float, samples: int = 25) -> TimedItem:
    return TimedItem("t001", "10_two_step", "float", 1 << 24, samples, median_us, verified=True, excess_us=excess_us)


class ClockRule(unittest.TestCase):
    def test_a_claim_the_clock_agrees_with_stands(self):
        self.assertEqual(clock_problem(item(30.0, 45.0), 40.0, 25.0, 0.15), "")
        self.assertEqual(clock_problem(item(30.0, 40.0 + 25.0 + 4.5), 40.0, 25.0, 0.15), "")   # just inside the slack

    def test_time_the_claim_leaves_out_contradicts_it(self):
        problem = clock_problem(item(30.0, 40.0 + 25.0 + 4.6), 40.0, 25.0, 0.15)
        self.assertIn("about 59.6 us, the lab reported 30.0 us", problem)
        self.assertIn("no performance points", problem)

    def test_a_twentieth_of_the_real_time_is_caught(self):
        self.assertTrue(clock_problem(item(28.0, 40.0 + 19 * 28.0), 40.0, 25.0, 0.15))

    def test_calls_the_clock_never_saw_reported_are_not_believed(self):
        self.assertIn("saw none", clock_problem(item(28.0, -1.0), 40.0, 25.0, 0.15))
        self.assertEqual(clock_problem(item(0.0, -1.0, samples=0), 40.0, 25.0, 0.15), "")   # nothing claimed


class RealTimekeeper(unittest.TestCase):
    """reduction_timekeeper starting the timing worker on lab 01's reference module, trusted and (as root
    with bubblewrap) sandboxed, then the checker on its transcript."""

    def setUp(self):
        checker = Path(os.environ.get("REDUCTION_CHECKER", "/nonexistent"))
        if not checker.is_file():
            self.skipTest("REDUCTION_CHECKER names no checker (run through ctest -R grader.unit)")
        self.manifest = load_manifest(checker.parents[2])
        if not self.manifest.timekeeper.is_file():
            self.skipTest(f"{self.manifest.timekeeper} is not built")
        self.lab = next(lab for lab in self.manifest.labs if lab.host)
        self.tmp = tempfile.TemporaryDirectory(prefix="reduction-timekeeper-")
        self.work = Path(self.tmp.name)
        os.chmod(self.work, 0o755)

    def tearDown(self):
        self.tmp.cleanup()

    def _time(self, tools: Toolchain, sandboxed: bool, **budget):
        module = self.work / self.lab.module_file
        shutil.copy(self.manifest.reference_module(self.lab), module)
        os.chmod(module, 0o644)
        items = [f"t00{k + 1},{self.lab.folder},host,{dtype},200000,{module}" for k, dtype in enumerate(("int", "float"))]
        plan = tools.timing_plan(11, items, 6, 2, 20.0, **budget)
        return tools.time(plan, self.work, sandboxed, (module,), False, 120.0, 20.0, self.work / "expected.txt")

    def _check(self, run, samples: int = 6) -> None:
        self.assertIsNotNone(run.check, run.problem + run.process.stderr[-500:])
        self.assertEqual(run.check.inputs, "host")
        self.assertEqual(run.check.tampered, "")
        for timed in run.check.items:
            self.assertTrue(timed.verified, timed.problem)
            self.assertEqual((timed.samples, timed.clocked, timed.inputs), (samples, samples, "host"))
            self.assertEqual(len(timed.calls_us), samples)
            # the clock's window holds the call itself: from go to report is at least what was claimed
            self.assertGreaterEqual(timed.window_us, timed.median_us * 0.5)
            self.assertGreaterEqual(timed.excess_us, 0.0)
            self.assertLess(timed.excess_us, 1e6)

    def test_a_trusted_run_is_clocked_call_by_call(self):
        self._check(self._time(Toolchain(self.manifest), sandboxed=False))

    def test_a_spent_budget_ends_each_item_after_its_least_calls_and_the_next_item_goes_on(self):
        # every call takes longer than a budget of 1 ns: each item ends after its 3 least timed calls
        self._check(self._time(Toolchain(self.manifest), sandboxed=False, min_samples=3, budget_ms=1e-6), samples=3)

    def test_a_budget_not_spent_leaves_every_call(self):
        self._check(self._time(Toolchain(self.manifest), sandboxed=False, min_samples=3, budget_ms=60000.0))

    def test_a_sandboxed_run_is_clocked_from_outside_its_sandbox(self):
        sandbox = Sandbox.detect(hidden=(self.manifest.source_dir, self.manifest.binary_dir))
        if not sandbox.enabled:
            self.skipTest(f"no sandbox here: {sandbox.reason}")
        self._check(self._time(Toolchain(self.manifest, sandbox), sandboxed=True))

    def test_a_worker_without_its_timekeeper_refuses_to_time(self):
        result = subprocess.run([str(self.manifest.student_worker), "--plan=/nonexistent"], capture_output=True,
                                text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("runs under reduction_timekeeper", result.stderr)


if __name__ == "__main__":
    unittest.main()
