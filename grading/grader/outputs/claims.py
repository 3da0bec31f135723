"""One grader at a time per student: a student being graded is claimed with an exclusive flock on
OUT/work/.claims/<name>.lock (student_paths.py), held until its record is complete.

Several graders may share one output folder: the workers of `--gpus`, the tasks of a Slurm array,
or an instructor who started a second run by mistake. A claim is released when its holder ends,
however it ends (the kernel drops the lock of a dead process), so a task that died leaves its
students to the next run and never blocks them. The lock file itself says nothing: it is never
read, only locked.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from .student_paths import claim_path


class Claim:
    def __init__(self, out: Path, student: str):
        self.path = claim_path(out, student)
        self._descriptor: int | None = None

    def acquire(self) -> bool:
        """True when this process now holds the student; False when another grader does."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return False
        self._descriptor = descriptor
        return True

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)   # closing drops the lock
            self._descriptor = None

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
