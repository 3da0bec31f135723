"""tools/skip_summary.sh and tools/test.sh after a real CTest run: the failed tests come first,
named, with where their output is and a command that runs each again, before the skip count; a
CTest summary quoted in a test's output is not read; test.sh still fails when a test failed, and
with a test preset and CTest's arguments (one lab's tests) its last line says what did not run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from .helpers import CTEST, REPO, configure, write_project

# A class of tests with every outcome: passed, skipped for want of a GPU (the lab runner's words),
# skipped for another reason, failed, timed out. grader.attacks prints another CTest run's lists,
# the way ci.student_run's output does when it fails.
PROJECT = r"""cmake_minimum_required(VERSION 3.25)
project(summary_fixture NONE)
enable_testing()
add_test(NAME harness.cpu COMMAND sh -c "echo fine")
add_test(NAME lab02.solution COMMAND sh -c "echo 'lab 02: no CUDA device present: skipped'; exit 77")
add_test(NAME grader.slurm COMMAND sh -c "echo 'SKIPPED: not root: Slurm is not installed'; exit 77")
set_tests_properties(lab02.solution grader.slurm PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME grader.attacks COMMAND sh -c "printf 'The following tests FAILED:\\n\\t  7 - quoted.elsewhere (Failed)\\n\\t  8 - quoted.skip (Skipped)\\n'; exit 1")
set_tests_properties(grader.attacks PROPERTIES LABELS "cpu;grader;attacks")
add_test(NAME ci.slow COMMAND sh -c "sleep 10")
set_tests_properties(ci.slow PROPERTIES TIMEOUT 1)
"""

# The presets test.sh reads in the fake tree: a workflow (ci) and a test preset (student).
FAKE_PRESETS = """{"version": 6,
 "configurePresets": [{"name": "ci"}, {"name": "student"}],
 "testPresets": [{"name": "student", "configurePreset": "student"}],
 "workflowPresets": [{"name": "ci", "steps": [{"type": "configure", "name": "ci"}]}]}
"""


class SkipSummaryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.source, cls.build = write_project(Path(cls.tmp.name), PROJECT)
        result = configure(cls.source, cls.build)
        if result.returncode != 0:
            raise AssertionError(f"the fixture project does not configure:\n{result.stdout}{result.stderr}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ctest(self, *args: str) -> Path:
        """Runs CTest on the fixture as the presets do; its console output, in a file."""
        result = subprocess.run([CTEST, "--test-dir", str(self.build), "--output-on-failure", *args],
                                capture_output=True, text=True, timeout=120)
        output = Path(self.tmp.name) / "ctest-output.txt"
        output.write_text(result.stdout + result.stderr, encoding="utf-8")
        return output

    def summary(self, output: Path) -> list[str]:
        result = subprocess.run(["bash", str(REPO / "tools" / "skip_summary.sh"), str(output), str(self.build)],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout.splitlines()

    def test_the_failed_tests_come_first_then_the_skip_count(self):
        lines = self.summary(self.ctest())
        log = self.build / "Testing" / "Temporary" / "LastTest.log"
        self.assertEqual(lines[0], f"2 of 5 tests FAILED (their output: above, and in {log}):", lines)
        self.assertRegex(lines[1], r"^  grader\.attacks \(Failed\); again: ctest ")
        self.assertRegex(lines[2], r"^  ci\.slow \(Timeout\); again: ctest ")
        self.assertTrue(lines[3].startswith("2 of 5 tests skipped: 1 for want of a GPU"), lines)
        self.assertEqual(lines[4], "  grader.slurm: not root: Slurm is not installed")
        self.assertEqual(len(lines), 5, lines)

    def test_a_summary_quoted_in_a_tests_output_is_not_read(self):
        text = "\n".join(self.summary(self.ctest()))
        self.assertNotIn("quoted.elsewhere", text)
        self.assertNotIn("quoted.skip", text)

    def test_the_command_given_runs_that_test_again(self):
        lines = self.summary(self.ctest())
        command = re.search(r"again: (ctest .*)$", lines[1]).group(1)
        self.assertIn(f"--test-dir {self.build}", command)
        env = dict(os.environ, PATH=f"{Path(CTEST).parent}:{os.environ.get('PATH', '')}")
        result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, env=env)
        self.assertIn("1 tests failed out of 1", result.stdout)
        self.assertIn("grader.attacks", result.stdout)

    def test_a_run_without_failures_says_nothing_failed(self):
        lines = self.summary(self.ctest("-E", "^(grader[.]attacks|ci[.]slow)$"))
        self.assertFalse([line for line in lines if "FAILED" in line], lines)
        self.assertTrue(lines[0].startswith("2 of 3 tests skipped: 1 for want of a GPU"), lines)

    def fake_tree(self) -> tuple[Path, dict]:
        """tools/test.sh as it is, in a tree of its own with presets of its own (a release has no
        ci preset), whose bootstrap passes and whose build trees are the fixture's; `cmake
        --workflow` is a CTest run of the fixture that fails the way the workflow's test step
        fails, `cmake --build` does nothing, and `ctest --preset NAME ARGS` runs the fixture with
        ARGS (logged to ctest-args)."""
        root = Path(self.tmp.name) / "tree"
        if not root.exists():
            (root / "tools").mkdir(parents=True)
            for script in ("test.sh", "skip_summary.sh"):
                shutil.copy2(REPO / "tools" / script, root / "tools" / script)
            (root / "CMakePresets.json").write_text(FAKE_PRESETS, encoding="utf-8")
            (root / "tools" / "bootstrap.sh").write_text("reduction_bootstrap() { :; }\n", encoding="utf-8")
            (root / "build").mkdir()
            for preset in ("ci", "student"):
                (root / "build" / preset).symlink_to(self.build)
        bin_dir = Path(self.tmp.name) / "bin"
        bin_dir.mkdir(exist_ok=True)
        fake_cmake = bin_dir / "cmake"
        fake_cmake.write_text(f'#!/bin/sh\n[ "$1" = --build ] && exit 0\n'
                              f'"{CTEST}" --test-dir "{self.build}" --output-on-failure\nexit 8\n', encoding="utf-8")
        fake_ctest = bin_dir / "ctest"
        fake_ctest.write_text(f'#!/bin/sh\nshift 2\necho "$@" > "{root}/ctest-args"\n'
                              f'exec "{CTEST}" --test-dir "{self.build}" --output-on-failure "$@"\n', encoding="utf-8")
        for fake in (fake_cmake, fake_ctest):
            fake.chmod(0o755)
        return root, dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")

    def test_test_sh_fails_when_a_test_failed_and_says_what_failed_before_the_skips(self):
        root, env = self.fake_tree()
        result = subprocess.run(["bash", str(root / "tools" / "test.sh")], capture_output=True, text=True,
                                timeout=120, env=env)
        self.assertEqual(result.returncode, 8, result.stdout[-2000:] + result.stderr[-2000:])
        tail = result.stdout.splitlines()[-5:]
        self.assertTrue(tail[0].startswith("2 of 5 tests FAILED"), tail)
        self.assertTrue(tail[3].startswith("2 of 5 tests skipped"), tail)

    def test_test_sh_with_one_labs_tests_ends_with_what_did_not_run(self):
        # What a student types after each edit: one test preset and CTest's arguments. CTest alone
        # ends with "100% tests passed" and a list; test.sh's last line says the test did not run.
        root, env = self.fake_tree()
        result = subprocess.run(["bash", str(root / "tools" / "test.sh"), "student", "-R", "^lab02"],
                                capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(result.returncode, 0, result.stdout[-2000:] + result.stderr[-2000:])
        self.assertEqual((root / "ctest-args").read_text(encoding="utf-8").split(), ["-R", "^lab02"])
        self.assertIn("100% tests passed", result.stdout)
        self.assertTrue(result.stdout.splitlines()[-1].startswith("1 of 1 tests skipped: 1 for want of a GPU"),
                        result.stdout[-1000:])

    def test_test_sh_refuses_a_name_that_is_no_preset(self):
        root, env = self.fake_tree()
        result = subprocess.run(["bash", str(root / "tools" / "test.sh"), "studnet-large", "-L", "lab02"],
                                capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(result.returncode, 2)
        self.assertIn("'studnet-large' is no test preset", result.stderr)

if __name__ == "__main__":
    unittest.main()
