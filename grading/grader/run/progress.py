"""The class's progress, one line after each student: how many are done, how fast, when it ends, and
how many labs failed so far.

    [progress] 12/60 students, 2.4 labs/s, ETA 3m20s, failures so far: 7 labs of 5 students

Labs per second counts every lab of the students finished in this run; the ETA assumes the
students left take as long as those graded in this run so far (students already complete and
skipped count as done and take no time).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ..judge.verdicts import MISSING, NOT_RUN, PASSED

NOT_FAILURES = (PASSED, NOT_RUN, MISSING)  # a missing lab is reported, but it is not a lab that failed


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


@dataclass
class Progress:
    total: int
    done: int = 0
    graded_now: int = 0                 # finished in this run (not skipped)
    labs: int = 0
    failed_labs: int = 0
    failed_students: set[str] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def skipped(self) -> None:
        with self._lock:
            self.done += 1

    def finished(self, student: str, verdicts: list[str]) -> str:
        """Counts one student graded now (`verdicts`: its labs'); returns the progress line."""
        with self._lock:
            self.done += 1
            self.graded_now += 1
            self.labs += len(verdicts)
            failed = [v for v in verdicts if v not in NOT_FAILURES]
            self.failed_labs += len(failed)
            if failed:
                self.failed_students.add(student)
            return self.line()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        rate = self.labs / elapsed
        left = self.total - self.done
        eta = format_duration(elapsed / self.graded_now * left) if self.graded_now and left else "-" if left else "done"
        return (f"[progress] {self.done}/{self.total} students, {rate:.2f} labs/s, ETA {eta}, failures so far: "
                f"{self.failed_labs} labs of {len(self.failed_students)} students")
