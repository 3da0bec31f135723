"""Which runs keep one set of device buffers for all their cases (REUSE_BUFFERS_FLAG,
RunnerOptions::reuse_buffers): a grader's test runs, one lab or several; never a sanitizer run,
where each case's buffers at exact sizes are what lets memcheck see a read past the input. The
observer itself refuses the flag beside a sanitizer's log (REDUCTION_OBSERVER, set by CTest)."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader.contract import CLOSE_SANITIZER_LOG_FLAG, REUSE_BUFFERS_FLAG
from grader.manifest import Lab, Manifest
from grader.sandbox.process import ProcessResult
from grader.stages.toolchain import Toolchain
from grader_tests.helpers import REPO

LAB05 = Lab("05_sequential", "sequential.cu", "lab05_sequential")
LAB09 = Lab("09_shuffle", "shuffle.cu", "lab09_shuffle")


class ArgvRecorder(Toolchain):
    """The real Toolchain's command lines; nothing is run (each run reports an empty result)."""

    def __init__(self):
        super().__init__(Manifest(source_dir=REPO, binary_dir=REPO / "build", reference_dir=REPO / "build",
                                  nvcc="/bin/true", module_flags=[], include_dirs=[], labs=[LAB05, LAB09]))
        self.argvs: list[list[str]] = []

    def _sandboxed(self, argv, view, timeout, stall_s=None, channel=None, cpu=None, group=None, clock=None,
                   clock_fds=(), device_checks=False):
        self.argvs.append(list(argv))
        return ProcessResult(returncode=0)

    def _check(self, command, plan, run, *args, report=None, token=None):
        return ProcessResult(returncode=0, stdout="")


class WhichRunsKeepBuffers(unittest.TestCase):
    def setUp(self):
        self.tools = ArgvRecorder()
        self.work = Path(tempfile.mkdtemp(prefix="buffers-"))
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.labs = [(lab, self.work / f"{lab.module}.so", self.work / f"{lab.folder}.plan") for lab in (LAB05, LAB09)]

    def test_test_runs_keep_buffers(self):
        lab, module, plan = self.labs[0]
        self.tools.run_tests("amy", lab, module, plan, self.work / "cache", 60, 20)
        self.tools.run_tests_labs("amy", self.labs, self.work / "cache", 60, 20)
        self.assertEqual(len(self.tools.argvs), 2)
        for argv in self.tools.argvs:
            self.assertEqual(argv.count(REUSE_BUFFERS_FLAG), 1, argv)

    def test_sanitizer_runs_never_do(self):
        lab, module, plan = self.labs[0]
        self.tools.run_sanitizer("amy", lab, "memcheck", module, plan, 60, 20)
        self.tools.run_sanitizer_labs("amy", self.labs, "racecheck", 60, 20)
        self.assertEqual(len(self.tools.argvs), 2)
        for argv in self.tools.argvs:
            self.assertNotIn(REUSE_BUFFERS_FLAG, argv)
            self.assertTrue(any(arg.startswith(CLOSE_SANITIZER_LOG_FLAG) for arg in argv), argv)


class TheObserverRefusesBoth(unittest.TestCase):
    def test_kept_buffers_beside_a_sanitizers_log_is_a_usage_error(self):
        observer = Path(os.environ.get("REDUCTION_OBSERVER", "/nonexistent"))
        if not observer.is_file():
            self.skipTest("REDUCTION_OBSERVER names no built observer (run through ctest -R grader.unit)")
        common = [str(observer), "--lab=/nonexistent.so", "--expect=05_sequential", "--plan=/nonexistent.plan",
                  "--where=device"]
        both = subprocess.run(common + [REUSE_BUFFERS_FLAG, f"{CLOSE_SANITIZER_LOG_FLAG}=1:2"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(both.returncode, 2, both.stderr)
        self.assertIn("usage", both.stderr)
        # the flag alone parses: the run goes on to the (missing) module, and fails there, not on its arguments
        alone = subprocess.run(common + [REUSE_BUFFERS_FLAG], capture_output=True, text=True, timeout=60)
        self.assertNotIn("usage", alone.stderr)


if __name__ == "__main__":
    unittest.main()
