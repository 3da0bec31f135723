"""A test case around the real programs: the runner in the real sandbox (bubblewrap, as root; skipped
elsewhere) and the trusted checker, both from a build (ctest -R grader.unit names them in the
environment), over lab 01 modules, which need no GPU."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.manifest import Lab, Manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.stages.toolchain import Toolchain

LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")


class RealRunnerCase(unittest.TestCase):
    MODULES: tuple[str, ...] = ()   # the environment variables of the lab 01 modules a test runs

    def setUp(self):
        names = ("REDUCTION_OBSERVER", "REDUCTION_CHECKER", "REDUCTION_LAB01_REFERENCE", *self.MODULES)
        paths = {name: Path(os.environ.get(name, "/nonexistent")).resolve() for name in names}
        missing = [name for name, path in paths.items() if not path.is_file()]
        if missing:
            self.skipTest(f"{', '.join(missing)} name no built program (run through ctest -R grader.unit)")
        sandbox = Sandbox.detect(hidden=[REPO])
        if not sandbox.enabled:
            self.skipTest(f"bubblewrap sandbox unavailable here: {sandbox.reason}")
        self.tmp = Path(tempfile.mkdtemp(prefix="real-runner-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.tmp.chmod(0o755)
        self.paths = paths
        build = paths["REDUCTION_OBSERVER"].parents[2]
        reference = paths["REDUCTION_LAB01_REFERENCE"]
        self.tools = Toolchain(Manifest(REPO, build, reference.parent, shutil.which("true") or "/bin/true", [], []),
                               sandbox)
        if self.tools.manifest.reference_module(LAB01) != reference:
            self.skipTest(f"the reference module is not where the manifest looks: {reference}")

    def lab01_plan(self, cases: str) -> tuple[Path, Path]:
        """A lab 01 plan of `cases` (the checker's --cases) and its expected sums: (plan, cache)."""
        checker = str(self.paths["REDUCTION_CHECKER"])
        made = subprocess.run([checker, "plan", "--lab=01_host_sum", "--where=host", "--seed=7",
                               f"--reference={self.paths['REDUCTION_LAB01_REFERENCE']}", f"--cases={cases}"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)
        plan = self.tmp / "01.plan"
        plan.write_text(made.stdout)
        plan.chmod(0o644)
        cache = self.tmp / "cache"
        expected = subprocess.run([checker, "expect", f"--plan={plan}", f"--cache={cache}"],
                                  capture_output=True, text=True, timeout=120)
        self.assertEqual(expected.returncode, 0, expected.stderr)
        return plan, cache
