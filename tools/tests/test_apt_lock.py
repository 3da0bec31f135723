"""tools/bootstrap.sh's reduction_apt_locked: the project's apt-get runs (a bootstrap, the Slurm
test's install) take turns on one machine instead of one failing on apt's own lock, so CTest may
run ci.student_run and grader.slurm side by side. Checked with a stand-in command and a lock file
of the test's own (REDUCTION_APT_LOCK); nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from .helpers import REPO

BOOTSTRAP = REPO / "tools" / "bootstrap.sh"
# What each holder does while it has the lock: a start line, a pause, an end line.
HOLDER = 'echo "start $1" >>"$LOG"; sleep 0.4; echo "end $1" >>"$LOG"'


class AptLockTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.log = self.root / "log"
        self.env = dict(os.environ, LOG=str(self.log), REDUCTION_APT_LOCK=str(self.root / "apt.lock"))

    def tearDown(self):
        self.tmp.cleanup()

    def start(self, name: str, env: dict | None = None) -> subprocess.Popen:
        script = f'source "{BOOTSTRAP}"; holder() {{ {HOLDER}; }}; reduction_apt_locked holder {name}'
        return subprocess.Popen([shutil.which("bash"), "-c", script], env=env or self.env)

    @unittest.skipIf(shutil.which("flock") is None, "flock (util-linux) is not installed")
    def test_two_holders_take_turns(self):
        holders = [self.start(name) for name in ("a", "b", "c")]
        for holder in holders:
            self.assertEqual(holder.wait(timeout=30), 0)
        lines = self.log.read_text(encoding="utf-8").split()
        self.assertEqual(len(lines), 12, lines)
        for index in range(0, 12, 4):   # each start is followed by its own end: no overlap
            self.assertEqual(lines[index], "start", lines)
            self.assertEqual(lines[index + 2], "end", lines)
            self.assertEqual(lines[index + 1], lines[index + 3], lines)

    def test_the_command_s_status_comes_back(self):
        script = f'source "{BOOTSTRAP}"; failing() {{ return 7; }}; reduction_apt_locked failing'
        result = subprocess.run([shutil.which("bash"), "-c", script], env=self.env, capture_output=True, text=True,
                                timeout=30)
        self.assertEqual(result.returncode, 7, result.stderr)

    def test_a_lock_that_cannot_be_opened_still_runs_the_command(self):
        env = dict(self.env, REDUCTION_APT_LOCK=str(self.root / "no-such-folder" / "apt.lock"))
        self.assertEqual(self.start("alone", env).wait(timeout=30), 0)
        self.assertEqual(self.log.read_text(encoding="utf-8").split(), ["start", "alone", "end", "alone"])


if __name__ == "__main__":
    unittest.main()
