"""Ending a killed run, when what it left running keeps it from ending.

A run is killed as a process group (process.py). A sandboxed run's first process is bubblewrap,
outside the sandbox's session: it must be scheduled once more to exit, and only its end ends the
sandbox (--die-with-parent, the pid namespace) and with it what the run started in sessions of its
own. On kernels that throttle a CFS-bandwidth task on its way back to user space (Linux 6.18), a
killed task of a cgroup whose quota is spent waits for the quota like any other, and the run's own
leftovers spend it: in CI a student's lab 01 run started 256 spinning processes, each in a session
of its own; bubblewrap, killed, got 0.3 ms of CPU in 5 s, and the grader's wait for it never ended
(the CI job's limit stopped it after 50 minutes).

So a first process that has not ended KILLED_GRACE_S after its group was killed is helped: every
process of the run's uid is killed (nothing of the run spins any more), and it is moved out of the
student's CPU share into the grader's own cgroup (a task with SIGKILL pending never runs user code
again: nothing escapes the share). A run that ends at once costs nothing more (no scan of /proc).
After KILLED_LIMIT_S more the grader stops waiting, says so on its log and goes on: a run that does
not end never stops a grading.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

KILLED_GRACE_S = 2.0    # a killed process that can get a CPU has ended by then
KILLED_LIMIT_S = 60.0   # then moved out of its share: if it has not ended after this, the grader goes on
RETRY_S = 0.5


@dataclass(frozen=True)
class Ending:
    """What ends a sandboxed run besides its process group. `kill()`: SIGKILL to every process of the
    run's uid; `rescue(pid)`: moves a killed process out of the CPU share that starves it, returning
    "" or why it could not."""
    kill: Callable[[], None]
    rescue: Callable[[int], str]


def wait_killed(process: subprocess.Popen, kill_group: Callable[[int], None], ending: Ending | None) -> str:
    """Waits for `process`, just killed with its group; "" once it ended, else what the grader saw
    (also written on the grader's log) when it gave up after KILLED_LIMIT_S."""
    if _ended(process, KILLED_GRACE_S):
        return ""
    if ending:
        ending.kill()
    rescued = ending.rescue(process.pid) if ending else "no CPU share to move it out of"
    deadline = time.monotonic() + KILLED_LIMIT_S
    while time.monotonic() < deadline:
        kill_group(process.pid)
        if ending:
            ending.kill()
        if _ended(process, RETRY_S):
            return ""
    note = (f"process {process.pid} ({process.args[0] if process.args else '?'}) did not end "
            f"{KILLED_GRACE_S + KILLED_LIMIT_S:g} s after it was killed"
            + (f" (it could not leave its CPU share: {rescued})" if rescued else "") + "; the grading goes on")
    print(f"warning: {note}", file=sys.stderr, flush=True)
    return note


def _ended(process: subprocess.Popen, seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False
