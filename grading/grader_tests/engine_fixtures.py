"""The example class, generated once for the engine tests, and their base case: a grader with a
simulated toolchain (helpers.FakeToolchain) writing into a fresh output folder per test."""

import atexit
import json
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING, expected_class, fake_manifest, write_example_class
from grader.stages.engine import Grader, Options
from grader.policy import Policy

CLASS_DIR = tempfile.TemporaryDirectory()  # the example class is generated, not committed
SUBMISSIONS = write_example_class(Path(CLASS_DIR.name) / "example")
atexit.register(CLASS_DIR.cleanup)   # shared by several test modules: no one module's tearDownModule


def students():
    return [(path.name, path) for path in sorted(SUBMISSIONS.iterdir()) if path.is_dir()]


class GradingCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name) / "out"
        self.manifest = fake_manifest(Path(self.tmp.name) / "build")
        self.expected = expected_class()["students"]
        self.log = []

    def tearDown(self):
        self.tmp.cleanup()

    def grade(self, toolchain, force=False, who=None, policy=None):
        options = Options(labs=self.manifest.labs, jobs=4, force=force)
        grader = Grader(self.manifest, policy or Policy.load(GRADING / "policy.toml"), toolchain, self.out, options,
                        log=self.log.append)
        chosen = [s for s in students() if who is None or s[0] in who]
        return grader.grade_class(chosen)

    def record(self, student):
        return json.loads((self.out / "students" / f"{student}.json").read_text(encoding="utf-8"))
