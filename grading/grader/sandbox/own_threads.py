"""The grader's own threads, and every trusted program they start, kept off the timing core.

The students' cgroups keep their runs off the core the timing runs have (cpu_share.py), but the
grader is in none of them. Its threads and the trusted programs it starts for the students in flight
(the checker on a run's report, the toolkit's probes) went wherever the kernel's balancer put them,
and while the students' compiles fill the cores they may use, that is often the timing core, where a
device lab's timekeeper and worker take turns with them. An honest lab's calls then take hundreds of
microseconds beyond their claim while the references' around them do not, and its timing is
contradicted. On an H100 (the example class, 2026-11-27): the reference's own code as alice's labs 06
to 08 went 90 to 820 us beyond its references' and was contradicted twice; sampled at 10 Hz over a
grading (its build included), python3 was runnable on the timing core 94 times and the checker 31
times, 5 and 1 with this, and the honest cells' largest excess over their references' went from 63.8 to 16.1
us; what is left is the machine's own noise, on both sides (docs/grading-security.md).

Affinity is per thread and inherited by what a thread starts, so every thread of the process is
moved, and a thread started meanwhile (it inherits its starter's mask, old or new) is found by
looking again until no new one turns up. The timing runs are pinned to the timing core explicitly
(cpu_share.CpuShare.timing_cpu): a child may be given any core its cgroup allows.
"""

from __future__ import annotations

import contextlib
import os

TASKS = "/proc/self/task"


def set_every_thread(cores: set[int]) -> None:
    """Every thread of this process on `cores` (threads that end meanwhile are skipped)."""
    done: set[int] = set()
    while True:
        found = {int(tid) for tid in os.listdir(TASKS)} - done
        if not found:
            return
        for tid in found:
            with contextlib.suppress(ProcessLookupError):
                os.sched_setaffinity(tid, cores)
        done |= found


@contextlib.contextmanager
def kept_to(cores: set[int] | None):
    """Every thread of this process, and all they start, on `cores` for the `with` block; as they
    were after it. None: nothing changes."""
    if not cores:
        yield
        return
    before = os.sched_getaffinity(0)
    try:
        set_every_thread(cores)
    except OSError:   # cores this process may not have (a cpuset changed under it): graded as before
        set_every_thread(before)
        yield
        return
    try:
        yield
    finally:
        set_every_thread(before)
