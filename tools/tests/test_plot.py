"""tools/plot.sh, the README's plot command: with a python3 on PATH that lacks matplotlib it still
plots, with the Python the build would find; where no Python has matplotlib it names the package
to install; a REDUCTION_PYTHON without matplotlib is refused, not run."""

from __future__ import annotations

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from .helpers import FIXED_CANDIDATES, REPO, fixed_python_with_matplotlib, python_without_matplotlib

TIMINGS = REPO / "plots" / "tests" / "fixtures" / "timings.csv"


class PlotCommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = Path(self.tmp.name) / "bin"
        self.no_matplotlib = python_without_matplotlib(self.bin)
        self.out = Path(self.tmp.name) / "plots"

    def tearDown(self):
        self.tmp.cleanup()

    def plot(self, **env: str) -> subprocess.CompletedProcess:
        """tools/plot.sh with python3 on PATH lacking matplotlib (CI's PATH, this bin/ first)."""
        environment = {key: value for key, value in os.environ.items() if key != "REDUCTION_PYTHON"}
        environment.update(PATH=f"{self.bin}:/usr/bin:/bin", MPLBACKEND="Agg", **env)
        return subprocess.run(["bash", str(REPO / "tools" / "plot.sh"), str(TIMINGS), "--out", str(self.out),
                               "--figures", "ladder", "--formats", "png"],
                              capture_output=True, text=True, timeout=300, env=environment)

    def test_it_plots_with_the_python_that_has_matplotlib(self):
        if fixed_python_with_matplotlib() is None:
            self.skipTest(f"no Python with matplotlib on this machine ({', '.join(FIXED_CANDIDATES)}): "
                          "nothing for the command to find")
        result = self.plot()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue((self.out / "ladder.png").is_file(), result.stdout)

    def test_without_any_python_with_matplotlib_it_names_the_package(self):
        found = fixed_python_with_matplotlib()
        if found is not None:
            self.skipTest(f"{found} has matplotlib: the command finds it, so the error cannot be provoked here")
        result = self.plot()
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn("apt-get install -y python3-matplotlib", result.stderr)
        self.assertFalse(self.out.exists())

    def test_a_chosen_python_without_matplotlib_is_refused(self):
        result = self.plot(REDUCTION_PYTHON=str(self.no_matplotlib))
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertIn(f"REDUCTION_PYTHON={self.no_matplotlib} cannot import matplotlib", result.stderr)
        self.assertFalse(self.out.exists())


if __name__ == "__main__":
    unittest.main()
