""".ci/student_run.py's check of the test commands the texts quote: each quoted `bash tools/test.sh
student... ARGS` runs with -N and must select a test. The first runs alone (it may build); the rest
run side by side. Checked with a stand-in tools/test.sh that logs when each call starts and ends."""

from __future__ import annotations

import importlib.util
import tempfile
import unittest
from pathlib import Path

from .helpers import REPO

STUDENT_RUN = REPO / ".ci" / "student_run.py"
# The stand-in: logs "start ARGS" and "end ARGS" around a pause; a -L nothing selects no test.
STAND_IN = """#!/usr/bin/env bash
echo "start $*" >>"$(dirname "$0")/calls.log"
sleep 0.3
echo "end $*" >>"$(dirname "$0")/calls.log"
case " $* " in *" -L nothing "*) echo "Total Tests: 0" ;; *) echo "Total Tests: 3" ;; esac
"""


def load_student_run():
    spec = importlib.util.spec_from_file_location("student_run", STUDENT_RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@unittest.skipUnless(STUDENT_RUN.is_file(), "no .ci/student_run.py here (a student release has none)")
class QuotedCommandsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = Path(self.tmp.name)
        (self.tree / "tools").mkdir()
        (self.tree / "tools" / "test.sh").write_text(STAND_IN)
        (self.tree / "docs" / "student").mkdir(parents=True)
        (self.tree / "docs" / "student" / "README.md").write_text("No commands here.\n")
        self.student_run = load_student_run()

    def tearDown(self):
        self.tmp.cleanup()

    def write_readme(self, labels):
        (self.tree / "README.md").write_text("".join(f"Run `bash tools/test.sh student -L {label}`.\n" for label in labels))

    def calls(self):
        return (self.tree / "tools" / "calls.log").read_text().splitlines()

    def test_the_first_runs_alone_and_the_rest_side_by_side(self):
        self.write_readme(["lab01", "lab02", "lab03", "lab04"])
        self.assertEqual(self.student_run.check_quoted_test_commands(self.tree), [])
        calls = self.calls()
        self.assertEqual(calls[:2], ["start student -L lab01 -N", "end student -L lab01 -N"])
        starts = [i for i, line in enumerate(calls) if line.startswith("start")]
        self.assertEqual(len(starts), 4)
        self.assertTrue(all(i < 5 for i in starts[1:]),
                        f"the other three did not start before the first of them ended: {calls}")

    def test_a_command_that_selects_no_test_is_a_problem_that_names_its_file(self):
        self.write_readme(["lab01", "nothing", "lab02"])
        problems = self.student_run.check_quoted_test_commands(self.tree)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("`bash tools/test.sh student -L nothing` (README.md) selects no test", problems[0])


if __name__ == "__main__":
    unittest.main()
