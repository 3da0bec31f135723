"""common/cmake/FindPythonWithMatplotlib.cmake in a real configure: a REDUCTION_PYTHON given
without matplotlib stops it with a message that names it and says what to do; with none given,
a python3 on PATH without matplotlib is passed over for the one tools/bootstrap.sh also finds."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from .helpers import (FIXED_CANDIDATES, REPO, configure, fixed_python_with_matplotlib, python_without_matplotlib,
                      write_project)

MODULE = REPO / "common" / "cmake" / "FindPythonWithMatplotlib.cmake"
PROJECT = f"""cmake_minimum_required(VERSION 3.25)
project(find_python_fixture NONE)
include("{MODULE}")
"""


class FindPythonTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.source, self.build = write_project(Path(self.tmp.name), PROJECT)
        self.bin = Path(self.tmp.name) / "bin"
        self.no_matplotlib = python_without_matplotlib(self.bin)
        self.env = dict(os.environ, PATH=f"{self.bin}:{os.environ.get('PATH', '')}")

    def tearDown(self):
        self.tmp.cleanup()

    def cached_python(self) -> str:
        cache = (self.build / "CMakeCache.txt").read_text(encoding="utf-8")
        return next(line.split("=", 1)[1] for line in cache.splitlines() if line.startswith("REDUCTION_PYTHON:"))

    def test_a_given_python_without_matplotlib_stops_the_configure(self):
        result = configure(self.source, self.build, f"-DREDUCTION_PYTHON={self.no_matplotlib}", env=self.env)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        message = " ".join(result.stderr.split())   # CMake wraps its messages
        self.assertIn(f"REDUCTION_PYTHON={self.no_matplotlib} cannot import matplotlib", message)
        self.assertIn("No module named 'matplotlib'", message)
        self.assertIn("-DREDUCTION_PYTHON= (empty)", message)
        self.assertNotIn("Python with matplotlib:", result.stdout)

    def test_a_given_python_that_is_not_there_stops_the_configure(self):
        missing = Path(self.tmp.name) / "no-such-python3"
        result = configure(self.source, self.build, f"-DREDUCTION_PYTHON={missing}", env=self.env)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertIn(f"REDUCTION_PYTHON={missing} cannot import matplotlib", " ".join(result.stderr.split()))

    def test_the_search_passes_over_a_path_python_without_matplotlib(self):
        found = fixed_python_with_matplotlib()
        if found is None:
            self.skipTest(f"no Python with matplotlib on this machine ({', '.join(FIXED_CANDIDATES)})")
        result = configure(self.source, self.build, env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"Python with matplotlib: {found}", result.stdout)
        self.assertEqual(self.cached_python(), found)
        # tools/bootstrap.sh (and so tools/plot.sh) searches the same way and finds the same one.
        script = f'source "{REPO / "tools" / "bootstrap.sh"}"; reduction_python_with_matplotlib'
        env = {key: value for key, value in self.env.items() if key != "REDUCTION_PYTHON"}
        bootstrap = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(bootstrap.stdout.strip(), found)

    def test_a_given_python_with_matplotlib_is_kept(self):
        found = fixed_python_with_matplotlib()
        if found is None:
            self.skipTest(f"no Python with matplotlib on this machine ({', '.join(FIXED_CANDIDATES)})")
        result = configure(self.source, self.build, f"-DREDUCTION_PYTHON={found}", env=self.env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"Python with matplotlib: {found}", result.stdout)


if __name__ == "__main__":
    unittest.main()
