"""tools/test.sh's choice of what to run, through --dry-run (nothing checked, installed or built):
the default is the `ci` workflow where the presets have one (this repository) and `student` where
they do not (a student release, whose bare `bash tools/test.sh` must not ask for the instructors'
browser and then fail); a name that is no preset is refused with exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from .helpers import REPO

REPOSITORY_LIKE = {"version": 6, "configurePresets": [{"name": "ci"}, {"name": "student"}],
                   "testPresets": [{"name": "student", "configurePreset": "student"},
                                   {"name": "student-sanitize", "configurePreset": "student"}],
                   "workflowPresets": [{"name": "ci", "steps": []}, {"name": "student", "steps": []}]}
RELEASE_LIKE = {**REPOSITORY_LIKE, "configurePresets": [{"name": "student"}],
                "workflowPresets": [{"name": "student", "steps": []}]}


class TestShPlanTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "tools").mkdir()
        shutil.copy2(REPO / "tools" / "test.sh", self.root / "tools" / "test.sh")
        # A bootstrap that fails loudly: a dry run must never reach it.
        (self.root / "tools" / "bootstrap.sh").write_text("echo BOOTSTRAP RAN; exit 9\n", encoding="utf-8")

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, presets: dict, *args: str) -> subprocess.CompletedProcess:
        (self.root / "CMakePresets.json").write_text(json.dumps(presets), encoding="utf-8")
        return subprocess.run(["bash", str(self.root / "tools" / "test.sh"), "--dry-run", *args],
                              capture_output=True, text=True, timeout=60)

    def test_the_default_is_ci_in_the_repository_and_student_in_a_release(self):
        self.assertEqual(self.plan(REPOSITORY_LIKE).stdout.strip(),
                         "tools/test.sh: would run: cmake --workflow --preset ci")
        self.assertEqual(self.plan(RELEASE_LIKE).stdout.strip(),
                         "tools/test.sh: would run: cmake --workflow --preset student")

    def test_a_test_preset_with_arguments_builds_its_tree_then_runs_ctest(self):
        done = self.plan(RELEASE_LIKE, "student-sanitize", "-L", "lab07")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "tools/test.sh: would run: cmake --build --preset student && "
                                              "ctest --preset student-sanitize -L lab07")

    def test_a_name_that_is_no_preset_is_refused_and_nothing_runs(self):
        done = self.plan(RELEASE_LIKE, "sanitize", "-R", "lab07")
        self.assertEqual(done.returncode, 2)
        self.assertIn("'sanitize' is no test preset", done.stderr)
        self.assertNotIn("BOOTSTRAP RAN", done.stdout + done.stderr)


if __name__ == "__main__":
    unittest.main()
