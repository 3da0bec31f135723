"""Ending a killed run (grader/sandbox/ending.py): a first process that does not end when its group is
killed gets its uid's processes killed and is moved out of its CPU share, and is waited for a
bounded time; then the grader goes on and says so. The kernel's part (a killed task its spent quota
holds) is played by a process stand-in that ends only once it was moved; RealRun is a real one."""

import contextlib
import io
import subprocess
import sys
import unittest
from unittest import mock

from grader.sandbox import ending
from grader.sandbox.ending import Ending, wait_killed
from grader.sandbox.process import run_process


class Starved:
    """A killed process that ends only after `rescue` moved it (or never, with ends=False)."""

    def __init__(self, ends_when_moved: bool = True, ends_at_once: bool = False):
        self.pid, self.args = 4242, ["bwrap", "--die-with-parent"]
        self.moved, self.ends_when_moved, self.ends_at_once = False, ends_when_moved, ends_at_once
        self.waits = 0

    def wait(self, timeout=None):
        self.waits += 1
        if self.ends_at_once or (self.moved and self.ends_when_moved):
            return -9
        raise subprocess.TimeoutExpired(self.args, timeout)


class Recorder:
    def __init__(self, process: Starved, refuse: str = ""):
        self.process, self.refuse = process, refuse
        self.kills = self.group_kills = 0
        self.rescued: list[int] = []

    def kill(self):
        self.kills += 1

    def rescue(self, pid: int) -> str:
        self.rescued.append(pid)
        self.process.moved = not self.refuse
        return self.refuse

    def kill_group(self, pid: int):
        self.group_kills += 1

    def ending(self) -> Ending:
        return Ending(self.kill, self.rescue)


@contextlib.contextmanager
def short_limits(limit_s: float = 0.3):
    with mock.patch.object(ending, "KILLED_GRACE_S", 0.01), mock.patch.object(ending, "KILLED_LIMIT_S", limit_s), \
            mock.patch.object(ending, "RETRY_S", 0.01):
        yield


class WaitKilled(unittest.TestCase):
    def test_a_run_that_ends_at_once_costs_nothing_more(self):
        process = Starved(ends_at_once=True)
        calls = Recorder(process)
        self.assertEqual(wait_killed(process, calls.kill_group, calls.ending()), "")
        self.assertEqual((calls.kills, calls.rescued), (0, []))

    def test_a_starved_run_is_moved_out_of_its_share_then_ends(self):
        process = Starved()
        calls = Recorder(process)
        with short_limits():
            self.assertEqual(wait_killed(process, calls.kill_group, calls.ending()), "")
        self.assertEqual(calls.rescued, [4242])
        self.assertGreaterEqual(calls.kills, 1)   # its uid's processes: nothing of the run spins any more

    def test_a_run_that_never_ends_stops_the_wait_and_the_grader_says_why(self):
        process = Starved(ends_when_moved=False)
        calls = Recorder(process, refuse="cannot write '4242' to /sys/fs/cgroup/cgroup.procs: Permission denied")
        log = io.StringIO()
        with short_limits(0.2), contextlib.redirect_stderr(log):
            note = wait_killed(process, calls.kill_group, calls.ending())
        self.assertIn("process 4242 (bwrap) did not end", note)
        self.assertIn("Permission denied", note)
        self.assertIn("the grading goes on", note)
        self.assertIn(f"warning: {note}", log.getvalue())
        self.assertGreater(calls.group_kills, 1)

    def test_without_an_ending_the_wait_is_bounded_too(self):
        process = Starved(ends_when_moved=False)
        with short_limits(0.1), contextlib.redirect_stderr(io.StringIO()):
            note = wait_killed(process, lambda pid: None, None)
        self.assertIn("no CPU share to move it out of", note)


class RealRun(unittest.TestCase):
    def test_a_timed_out_run_that_ends_when_killed_needs_no_help(self):
        helped = []
        result = run_process([sys.executable, "-c", "import time; time.sleep(60)"], 0.5,
                             ending=Ending(lambda: helped.append("kill"), lambda pid: helped.append("rescue") or ""))
        self.assertTrue(result.timed_out)
        self.assertEqual(result.unended, "")
        self.assertEqual(helped, [])


if __name__ == "__main__":
    unittest.main()
