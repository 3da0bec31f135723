"""The real runner over several labs, in the real sandbox (bubblewrap, as root; skipped elsewhere),
its report judged by the real checker one lab's part at a time (Toolchain.run_tests_labs). On a
machine without a GPU only the host lab runs: the lab 01 reference, then a second lab 01 module
(a fixture): the first part is judged on its own and closed by the second, and a second part for
the same lab is not believed (the fixture also writes into every descriptor it has, the report
channel's too: those lines are malformed, and counted)."""

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


class RunnerOverSeveralLabs(unittest.TestCase):
    def setUp(self):
        paths = {name: Path(os.environ.get(name, "/nonexistent")).resolve() for name in
                 ("REDUCTION_OBSERVER", "REDUCTION_CHECKER", "REDUCTION_LAB01_REFERENCE", "REDUCTION_LOG_WRITER_MODULE")}
        missing = [name for name, path in paths.items() if not path.is_file()]
        if missing:
            self.skipTest(f"{', '.join(missing)} name no built program (run through ctest -R grader.unit)")
        sandbox = Sandbox.detect(hidden=[REPO])
        if not sandbox.enabled:
            self.skipTest(f"bubblewrap sandbox unavailable here: {sandbox.reason}")
        self.tmp = Path(tempfile.mkdtemp(prefix="tests-together-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.tmp.chmod(0o755)
        self.paths = paths
        build = paths["REDUCTION_OBSERVER"].parents[2]
        reference = paths["REDUCTION_LAB01_REFERENCE"]
        self.tools = Toolchain(Manifest(REPO, build, reference.parent, shutil.which("true") or "/bin/true", [], []),
                               sandbox)
        if self.tools.manifest.reference_module(LAB01) != reference:
            self.skipTest(f"the reference module is not where the manifest looks: {reference}")
        checker = str(paths["REDUCTION_CHECKER"])
        made = subprocess.run([checker, "plan", "--lab=01_host_sum", "--where=host", "--seed=7",
                               f"--reference={paths['REDUCTION_LAB01_REFERENCE']}",
                               "--cases=int mixed_sign 33;float uniform_positive 1025"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.plan = self.tmp / "01.plan"
        self.plan.write_text(made.stdout)
        self.plan.chmod(0o644)
        self.cache = self.tmp / "cache"
        expected = subprocess.run([checker, "expect", f"--plan={self.plan}", f"--cache={self.cache}"],
                                  capture_output=True, text=True, timeout=120)
        self.assertEqual(expected.returncode, 0, expected.stderr)

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
