"""The places of the students in flight ([pipeline] students): a student takes one when it starts and
gives it back when it ends, or earlier, once all that is left of it is its timing (timing.py): its
timing turns take the timing lane, and the GPU or the cores alone, one student at a time
(gpu_gate.py), so a place held while waiting for them would only keep the next student's compiles,
tests and sanitizer runs from filling the machine around the turns. Places go in the class's order:
the next student is always the next of the roster, whichever thread asks first."""

from __future__ import annotations

import contextlib
import threading


class Flight:
    def __init__(self, places: int) -> None:
        self._free = max(1, places)
        self._next = 0   # the position in the order of the next student to get a place
        self._condition = threading.Condition()
        self._holding: set[str] = set()

    @contextlib.contextmanager
    def place(self, student: str, position: int | None = None):
        """A place for `student` for the `with` block, or until leave(student). `position`: the
        student's place in the order (0, 1, 2, ... each once): it waits for those before it."""
        with self._condition:
            while self._free <= 0 or (position is not None and position != self._next):
                self._condition.wait()
            self._free -= 1
            self._next += 1 if position is not None else 0
            self._holding.add(student)
        try:
            yield
        finally:
            self.leave(student)

    def leave(self, student: str) -> None:
        """`student` gives its place back now (once: a student without one gives nothing)."""
        with self._condition:
            if student not in self._holding:
                return
            self._holding.discard(student)
            self._free += 1
            self._condition.notify_all()

    def holding(self) -> int:
        with self._condition:
            return len(self._holding)
