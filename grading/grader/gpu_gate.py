"""Sharing one GPU between the students graded at the same time.

Correctness and sanitizer runs of several students share the GPU (none comes near saturating it);
a timing run has it alone, as in a solo grading, so a ratio measured while a class is graded means
what it means for one student. The gate is a readers-writer lock that prefers the writer: once a
timing run waits, no new test run starts, so timing is never starved by a stream of tests, and the
students waiting for timing go one after another before the tests resume.

`quiet_since(mark)` tells the timing whether the GPU ran anything else since an earlier exclusive
turn ended: only then may a reference run measured at the end of that turn serve as the next
student's "before" (benchmark.ClassTiming), as it does in a solo grading.
"""

from __future__ import annotations

import contextlib
import threading


class GpuGate:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._sharing = 0           # shared holders now
        self._exclusive = False     # an exclusive holder now
        self._waiting_exclusive = 0
        self._shared_turns = 0      # shared acquisitions so far (the "something else ran" counter)

    @contextlib.contextmanager
    def shared(self):
        with self._condition:
            while self._exclusive or self._waiting_exclusive:
                self._condition.wait()
            self._sharing += 1
            self._shared_turns += 1
        try:
            yield
        finally:
            with self._condition:
                self._sharing -= 1
                self._condition.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        """Yields the shared-turn count at entry: pass it to quiet_since() at the next exclusive turn."""
        with self._condition:
            self._waiting_exclusive += 1
            try:
                while self._exclusive or self._sharing:
                    self._condition.wait()
            finally:
                self._waiting_exclusive -= 1
            self._exclusive = True
            mark = self._shared_turns
        try:
            yield mark
        finally:
            with self._condition:
                self._exclusive = False
                self._condition.notify_all()

    def quiet_since(self, mark: int | None) -> bool:
        """No shared run started since `mark` (a count yielded by exclusive())."""
        with self._condition:
            return mark is not None and self._shared_turns == mark
