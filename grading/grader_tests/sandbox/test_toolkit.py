"""The toolkit is where nvcc says it is, also when the nvcc on PATH is a wrapper script."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from pathlib import Path

from grader.report.diagnostics import public_folders
from grader.sandbox.toolkit import parse_dry_run, toolkit_of

DRY_RUN = """\
#$ _HERE_=/opt/cuda/bin
#$ TOP=/opt/cuda/bin/..
#$ INCLUDES="-I/opt/cuda/bin/../targets/x86_64-linux/include"  
#$ SYSTEM_INCLUDES="-isystem" "/opt/cuda/bin/../targets/x86_64-linux/include/cccl"  
#$ cudafe++ --TOP=/elsewhere
"""


class ParseDryRun(unittest.TestCase):
    def test_top_and_include_folders_are_read_and_resolved(self):
        root, folders = parse_dry_run(DRY_RUN)
        self.assertEqual(root, Path(os.path.realpath("/opt/cuda")))
        self.assertEqual(folders, (Path(os.path.realpath("/opt/cuda/targets/x86_64-linux/include")),
                                   Path(os.path.realpath("/opt/cuda/targets/x86_64-linux/include/cccl"))))

    def test_output_without_a_top_line_is_none(self):
        self.assertIsNone(parse_dry_run("nvcc fatal : Unknown option '--dryrun'\n"))


class WrapperScript(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="toolkit-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        toolkit_of.cache_clear()
        self.addCleanup(toolkit_of.cache_clear)

    def test_a_stand_in_that_cannot_be_asked_is_guessed_from_its_folder(self):
        nvcc = self.tmp / "cuda" / "bin" / "nvcc"
        nvcc.parent.mkdir(parents=True)
        nvcc.write_text("not a program\n")
        found = toolkit_of(str(nvcc))
        self.assertEqual((found.root, found.asked), (self.tmp / "cuda", False))

    def test_a_wrapper_scripts_toolkit_is_the_real_one(self):
        real = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").is_file() else None)
        if real is None:
            self.skipTest("nvcc not found (PATH, /usr/local/cuda/bin): the wrapper needs a real one to run")
        expected = toolkit_of(real)
        self.assertTrue(expected.asked, "a real nvcc answers its dry run")
        wrapper = self.tmp / "bin" / "nvcc"
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n')
        wrapper.chmod(0o755)
        found = toolkit_of(str(wrapper))
        self.assertEqual((found.root, found.include_dirs), (expected.root, expected.include_dirs))
        self.assertNotEqual(found.root, self.tmp)
        cooperative_groups = next(folder for folder in found.include_dirs if (folder / "cooperative_groups.h").is_file())
        self.assertIn(cooperative_groups, public_folders(str(wrapper), []),
                      "a toolkit header's diagnostics are shown whichever nvcc compiled")


if __name__ == "__main__":
    unittest.main()
