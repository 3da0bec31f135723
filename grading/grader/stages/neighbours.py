"""Which other students' runs shared the machine with a run, for the retry of a run harmed by them.

Every sandboxed run of a student (a compile, a test or sanitizer run, a timing turn) is entered here
while it runs. A run meets every run of another student that is running at some moment of its own
life: whichever of the two starts second sees the first. "Students in flight > 1" is not enough: a
student's runs may all fall between a classmate's, and a student's own runs side by side are no
classmate's doing.

Where the CPU time of each student's cgroup can be read (cpu_share.py), a run also records how much
of it the other students' cgroups took while it ran: the evidence that they held the cores.

Each run that names its stage is also reported, when it ends, to `on_run` (the grading's ledger,
outputs/ledger.py: when it ran and whether it held the GPU).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Met:
    """The other students whose runs ran beside one run (complete when the run has ended)."""
    students: set[str] = field(default_factory=set)       # any run of theirs
    on_gpu: set[str] = field(default_factory=set)         # a run of theirs on the GPU
    others_cpu_s: float | None = None   # the CPU time the other students' cgroups took meanwhile (None: unmeasured)
    seconds: float = 0.0                # how long the run took

    def shared(self, gpu_only: bool) -> bool:
        """Another student's run shared the resource: the GPU's (`gpu_only`) or the host's."""
        return bool(self.on_gpu if gpu_only else self.students)


@dataclass
class _Run:
    student: str
    gpu: bool
    met: Met = field(default_factory=Met)

    def meet(self, other: _Run) -> None:
        self.met.students.add(other.student)
        if other.gpu:
            self.met.on_gpu.add(other.student)


class Neighbours:
    def __init__(self, others_cpu: Callable[[str], float | None] | None = None) -> None:
        """`others_cpu(student)`: the CPU time so far of every other student's cgroup, or None."""
        self._others_cpu = others_cpu or (lambda student: None)
        self._lock = threading.Lock()
        self._running: dict[int, _Run] = {}
        self._ids = itertools.count()
        # (stage, student, gpu, started, seconds) of each run that names its stage, when it ends
        self.on_run: Callable[[str, str, bool, float, float], None] | None = None

    @contextlib.contextmanager
    def run(self, student: str, gpu: bool, stage: str = ""):
        """A run of `student` (on the GPU or not; of `stage`) for the time of the block; yields its Met."""
        me = _Run(student, gpu)
        started, before = time.monotonic(), self._others_cpu(student)
        with self._lock:
            key = next(self._ids)
            for other in self._running.values():
                if other.student != student:
                    me.meet(other)
                    other.meet(me)
            self._running[key] = me
        try:
            yield me.met
        finally:
            with self._lock:
                del self._running[key]
            after = self._others_cpu(student)
            me.met.seconds = time.monotonic() - started
            me.met.others_cpu_s = None if before is None or after is None else max(0.0, after - before)
            if stage and self.on_run is not None:
                self.on_run(stage, student, gpu, started, me.met.seconds)
