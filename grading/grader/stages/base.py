"""What every stage has: the grader it belongs to (the run's context), the labs by folder, a pool."""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..manifest import Lab
from ..outputs.records import StudentRecord


class Stage:
    name = ""
    begins_after = ""   # a stage that may begin part of its work once this earlier stage is done (begin())

    def __init__(self, grader):
        self.g = grader

    def begin(self, who: tuple, record: StudentRecord, work: Path) -> None:
        """Starts, beside the stages between, what of this stage needs only the stages up to
        `begins_after`; run() finishes it."""

    def run(self, who: tuple, record: StudentRecord, work: Path) -> None:
        raise NotImplementedError

    def lab(self, folder: str) -> Lab:
        return self.g.lab(folder)


@contextlib.contextmanager
def pool(workers: int):
    """A thread pool (each job waits on a subprocess) that drops its queued jobs on an error."""
    executor = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        yield executor
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
