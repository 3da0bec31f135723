"""The commands shipped texts quote: how they are found (quoted_commands.py), and the checks of
.ci/release_commands.py that need no build, on a fake release: each must catch its kind of broken
command (a preset or script the release lacks, an option the program does not have, an
instructor build tree) and pass a working one. The whole check on a real release, its student
build included, is part of ci.release_run."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader_tests.quoted_commands import Quoted, fenced_commands, inline_commands, placeholders

_spec = importlib.util.spec_from_file_location("release_commands", REPO / ".ci" / "release_commands.py")
release_commands = importlib.util.module_from_spec(_spec)
sys.modules["release_commands"] = release_commands
_spec.loader.exec_module(release_commands)

TEXT = """# Lab

```bash
bash tools/test.sh student -L lab04     # after each edit
$ build/student/common/bench/reduction_bench --labs 04 \\
    --sizes 2^24   # a comment
```

```cuda
bash tools/test.sh not-a-command-here
```

Run `bash tools/test.sh student-sanitize
-L lab04` then `lab04.sanitize.racecheck` (a test name, not a command) and
`reduction_bench --help`; configure with `-DREDUCTION_FOO=ON`; see `grading/sanitize.sh`.
"""

PRESETS = {"version": 6, "configurePresets": [{"name": "student"}],
           "buildPresets": [{"name": "student", "configurePreset": "student"}],
           "testPresets": [{"name": "student", "configurePreset": "student"}],
           "workflowPresets": [{"name": "student", "steps": []}]}

ARGPARSE_SCRIPT = """import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--lab")
parser.parse_args()
"""


class FindingTest(unittest.TestCase):
    def test_shell_blocks_join_continuations_and_drop_prompts_and_comments(self):
        self.assertEqual([(q.line, q.text) for q in fenced_commands(TEXT, "x.md")], [
            (4, "bash tools/test.sh student -L lab04"),
            (5, "build/student/common/bench/reduction_bench --labs 04 --sizes 2^24")])

    def test_inline_spans_that_start_like_a_command_even_wrapped(self):
        self.assertEqual([(q.line, q.text) for q in inline_commands(TEXT, "x.md")], [
            (13, "bash tools/test.sh student-sanitize -L lab04"),
            (15, "reduction_bench --help"),
            (15, "-DREDUCTION_FOO=ON"),
            (15, "grading/sanitize.sh")])

    def test_placeholders_are_named_and_flags_are_not(self):
        self.assertEqual(placeholders(["reduction_bench", "--labs", "NN", "--out", "DIR", "--csv=FILE.csv",
                                       "-DREDUCTION_BUILD_SOLUTIONS=ON", "-L", "labNN", "-N", "2^24",
                                       "--student-dir", "COPY/build/student/labs", "build/student/labs"]),
                         ["NN", "DIR", "--csv=FILE.csv", "labNN", "COPY/build/student/labs"])


class FakeReleaseCheckTest(unittest.TestCase):
    """The checks that need no configured build, on a fake release with the real tools/test.sh."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = Path(self.tmp.name)
        (root / "tools").mkdir()
        shutil.copy2(REPO / "tools" / "test.sh", root / "tools" / "test.sh")
        (root / "tools" / "bootstrap.sh").write_text("exit 9\n", encoding="utf-8")
        (root / "grading").mkdir()
        (root / "grading" / "tool.py").write_text(ARGPARSE_SCRIPT, encoding="utf-8")
        (root / "labs").mkdir()
        (root / "labs" / "lab.cu").write_text("", encoding="utf-8")
        (root / "CMakePresets.json").write_text(json.dumps(PRESETS), encoding="utf-8")
        self.release = release_commands.Release(root)

    def tearDown(self):
        self.tmp.cleanup()

    def problem(self, text: str) -> str:
        return release_commands.check(self.release, Quoted("x.md", 1, text, True)).problem

    def test_presets_the_release_lacks_are_caught(self):
        self.assertIn("'sanitize' is no test preset", self.problem("bash tools/test.sh sanitize -R lab07"))
        self.assertIn("no configure preset `solutions`", self.problem("cmake --preset solutions"))
        self.assertIn("no build preset `solutions`",
                      self.problem("cmake --preset student && cmake --build --preset solutions"))
        self.assertEqual(self.problem("bash tools/test.sh"), "")
        self.assertEqual(self.problem("bash tools/test.sh student"), "")
        self.assertEqual(self.problem("cmake --workflow --preset student"), "")

    def test_scripts_and_files_the_release_lacks_are_caught(self):
        self.assertIn("no such script", self.problem("bash grading/device_check.sh --stages aa"))
        self.assertIn("no such script", self.problem("grading/device_check.sh --stages aa"))
        self.assertIn("no such file", self.problem("$EDITOR labs/missing.cu"))
        self.assertEqual(self.problem("$EDITOR labs/lab.cu"), "")

    def test_an_option_the_program_does_not_have_is_caught(self):
        self.assertIn("--who: not an option", self.problem("python3 grading/tool.py --lab 05 --who both"))
        self.assertEqual(self.problem("python3 grading/tool.py --lab 05"), "")

    def test_an_instructor_build_tree_is_caught_but_an_output_folder_is_not(self):
        self.assertIn("a build tree the release does not make",
                      self.problem("python3 grading/tool.py --lab 05 --build-dir build/solutions"))
        self.assertIn("a build tree the release does not make",
                      self.problem("build/solutions/common/bench/reduction_bench --labs 10"))
        self.assertNotIn("build tree", self.problem("python3 grading/tool.py --lab 05 --out build/self-check"))

    def test_toolkit_tools_named_alone_are_left_for_a_gpu(self):
        verdict = release_commands.check(self.release, Quoted("x.md", 1, "ncu --section MemoryWorkloadAnalysis", False))
        self.assertEqual(verdict.problem, "")
        self.assertIn("GPU", verdict.remains)

    def test_an_unknown_command_is_a_problem_not_a_pass(self):
        self.assertIn("not a command this check knows", self.problem("make install"))


if __name__ == "__main__":
    unittest.main()
