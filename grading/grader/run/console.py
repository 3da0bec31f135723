"""The console of a grading: the events' lines (outputs/events.py) through a log, and after each
student graded or skipped, the class's progress line (progress.py)."""

from __future__ import annotations

import threading
from typing import Callable

from ..outputs.events import ClassStarted, Event, StudentDone, StudentSkipped
from .progress import Progress


class Console:
    """Renders events as console lines through `log`, and after each student graded or skipped
    counts the class's progress: of `total` students, or of those the first ClassStarted announces;
    a progress line after each one graded."""

    def __init__(self, log: Callable[[str], None], total: int | None = None, prefix: str = "",
                 once_per_student: bool = False):
        self.log = log
        self.progress = Progress(total) if total is not None else None
        self.prefix = prefix
        # Several graders over one class (--gpus workers) each see every student: a student counts once,
        # when it is graded or found complete, never for a grader that left it to another.
        self.once_per_student = once_per_student
        self._counted: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, event: Event, prefix: str | None = None) -> None:
        line = event.text()
        with self._lock:
            if isinstance(event, ClassStarted) and self.progress is None:
                self.progress = Progress(event.students)
            if line is not None:
                self.log((self.prefix if prefix is None else prefix) + line)
            if self.progress is None or not isinstance(event, (StudentDone, StudentSkipped)):
                return
            if self.once_per_student:
                if event.student in self._counted or (isinstance(event, StudentSkipped) and event.why):
                    return
                self._counted.add(event.student)
            if isinstance(event, StudentDone):
                self.log(self.progress.finished(event.student, list(event.verdicts)))
            else:
                self.progress.skipped()
