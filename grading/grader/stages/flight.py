"""The places of the students in flight ([pipeline] students): a student takes one when it starts and
gives it back when it ends, or earlier, once all that is left of it is its timing (timing.py): its
timing turns take the timing lane, and the GPU or the cores alone, one student at a time
(gpu_gate.py), so a place held while waiting for them would only keep the next student's compiles,
tests and sanitizer runs from filling the machine around the turns. A student whose run waits to be
run again alone (runs.py) is away meanwhile: it gives its place back for as long as it waits and runs,
then takes one again before any student who has not started (in the attack class on an H100,
2026-11-28, the four places were held 95 s by students waiting behind two hogs' 50-s runs for their
runs alone, and no student started). Places go in the class's order: the next student is always the
next of the roster, whichever thread asks first."""

from __future__ import annotations

import contextlib
import threading


class Flight:
    def __init__(self, places: int) -> None:
        self._free = max(1, places)
        self._next = 0   # the position in the order of the next student to get a place
        self._condition = threading.Condition()
        self._holding: set[str] = set()
        self._returning = 0   # students back from away(), waiting for a place: they go first

    @contextlib.contextmanager
    def place(self, student: str, position: int | None = None):
        """A place for `student` for the `with` block, or until leave(student). `position`: the
        student's place in the order (0, 1, 2, ... each once): it waits for those before it."""
        with self._condition:
            while self._free <= self._returning or (position is not None and position != self._next):
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

    @contextlib.contextmanager
    def away(self, student: str):
        """`student` gives its place back for the `with` block and takes one again after it, before
        any student who has not started; a student without a place (in its timing) stays without."""
        with self._condition:
            held = student in self._holding
        if not held:
            yield
            return
        self.leave(student)
        try:
            yield
        finally:
            with self._condition:
                self._returning += 1
                try:
                    while self._free <= 0:
                        self._condition.wait()
                finally:
                    self._returning -= 1
                self._free -= 1
                self._holding.add(student)
                self._condition.notify_all()

    def holding(self) -> int:
        with self._condition:
            return len(self._holding)
