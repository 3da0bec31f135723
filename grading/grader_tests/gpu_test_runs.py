"""A grader's test run on the GPU with its buffers kept from case to case (--reuse-buffers,
RunnerOptions::reuse_buffers): the scratch's guards move with each case's temp_storage_bytes, and a
run reports what a case's own buffers report. A CTest entry of its own (grader.test_runs_gpu).
Skipped, saying so, where no GPU is present. REDUCTION_CHECKER, set by CTest, names the build's
checker; the scratch-overrun fixture is the one lab05.scratch_overrun.guard_catches_it builds."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.contract import REUSE_BUFFERS_FLAG
from grader.manifest import load_manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.stages.toolchain import Toolchain
from grader_tests.helpers import main_with_skip_code

# Large first, then smaller: a kept scratch is then larger than the later cases' temp_storage_bytes,
# and only a guard moved to each case's own end sees a write just past it.
CASES = ["int mixed_sign 1000003", "float uniform_positive 65536", "int small_integers 2049",
         "float mixed_sign 257", "int mixed_sign 33", "float uniform_positive 1"]


class GpuTestRuns(unittest.TestCase):
    def setUp(self):
        checker = Path(os.environ.get("REDUCTION_CHECKER", "/nonexistent"))
        if not checker.is_file():
            self.skipTest("REDUCTION_CHECKER names no checker (run through ctest -R grader.test_runs_gpu)")
        if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode:
            self.skipTest("no GPU on this machine (nvidia-smi -L finds none)")
        self.manifest = load_manifest(checker.parents[2])
        self.lab = next(lab for lab in self.manifest.labs if lab.folder.startswith("05_"))
        self.fixture = self.manifest.binary_dir / "grading" / "fixtures" / "lab05_scratch_overrun.so"
        self.tmp = tempfile.TemporaryDirectory(prefix="reduction-test-runs-")
        self.work = Path(self.tmp.name)
        os.chmod(self.work, 0o755)
        self.tools = Toolchain(self.manifest, Sandbox.detect(hidden=(self.manifest.source_dir, self.manifest.binary_dir)))
        self.plan, self.cache = self.work / "plan.txt", self.work / "cache"
        self.tools.make_plan(self.lab, 7, self.plan, cases=CASES)
        self.tools.expect(self.plan, self.cache)

    def tearDown(self):
        self.tmp.cleanup()

    def _module(self, source: Path) -> Path:
        module = self.work / self.lab.module_file
        shutil.copy(source, module)
        os.chmod(module, 0o644)
        return module

    def test_a_kept_scratch_is_guarded_at_each_cases_own_end(self):
        """The fixture writes one element past temp_storage_bytes in every case with n > 0: each case of
        the run, the small ones after the large one included, fails on the guard, and none on its sum."""
        if not self.fixture.is_file():
            self.skipTest(f"{self.fixture} is not built (an instructor build builds it)")
        run, check = self.tools.run_tests("s", self.lab, self._module(self.fixture), self.plan, self.cache, 120.0, 20.0)
        self.assertIsNotNone(check, run.stderr[-800:])
        self.assertEqual((check.cases, check.observed, check.correct), (len(CASES), len(CASES), 0), check)
        self.assertIn("scratch", str(check.first_failure))

    def test_kept_buffers_report_what_a_cases_own_buffers_report(self):
        """The reference, its observer run by hand with and without --reuse-buffers: the same lines for
        every case (values, digests, statuses), every sum right by the checker."""
        reports = {}
        for flags in ((), (REUSE_BUFFERS_FLAG,)):
            out = self.work / f"report{len(flags)}.txt"
            with open(out, "w") as report:
                result = subprocess.run(
                    [str(self.manifest.observer), f"--lab={self.manifest.reference_module(self.lab)}",
                     f"--expect={self.lab.folder}", "--where=device", f"--plan={self.plan}", "--call-timeout=20",
                     *flags, f"--report-fd={report.fileno()}"], pass_fds=(report.fileno(),),
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr[-800:])
            reports[flags] = [line for line in out.read_text().splitlines() if '"observed"' in line]
        self.assertEqual(len(reports[()]), len(CASES))
        self.assertEqual(reports[()], reports[(REUSE_BUFFERS_FLAG,)])
        run, check = self.tools.run_tests("s", self.lab, self._module(self.manifest.reference_module(self.lab)),
                                          self.plan, self.cache, 120.0, 20.0)
        self.assertIsNotNone(check, run.stderr[-800:])
        self.assertEqual((check.correct, check.wrong), (len(CASES), 0), check)


if __name__ == "__main__":
    main_with_skip_code()
