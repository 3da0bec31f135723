"""A grading's ledger: when each run of each stage ran and whether it held the GPU, and what each
student's stages took, on the wall and on the CPU. The throughput benchmark's per-stage breakdown
(tools/stage_breakdown.py) is computed from it: per stage, CPU seconds, the seconds the GPU was busy
with it, and the seconds the GPU waited idle.

The grader's own observations (its clock, its cgroups' CPU counters), written as JSON lines into the
run's folder as the grading goes; nothing a student's process can write. One file per grader (a
`--gpus` worker has its own folder): one ledger per GPU. A grading resumed with the same seed appends
to the same file; each grading begins with an `opened` line and the reader keeps the last grading.

    {"v": 1, "kind": "opened", "run": "5f0c...", "worker": "worker-gpu0", "started": "2026-11-27T10:40:00+00:00",
     "prepared_s": 6.2}
    {"v": 1, "kind": "span", "stage": "test", "student": "ana", "gpu": true, "start_s": 12.41, "seconds": 8.02}
    {"v": 1, "kind": "stage", "stage": "test", "student": "ana", "seconds": 19.3, "cpu_s": 41.2}
    {"v": 1, "kind": "closed", "seconds": 362.4, "grader_cpu_s": 30.1}
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

from ..contract import LEDGER_FILE, LEDGER_VERSION

ALONE = "alone"   # the stage of a run again alone (stages/runs.py); the others are stages.PIPELINE's names


@dataclass(frozen=True)
class Opened:
    kind: ClassVar[str] = "opened"
    run: str
    worker: str
    started: str
    prepared_s: float | None = None   # the grader's work before its first student: plans, expected sums,
                                      # self-tests (None: a ledger of before it was kept)


@dataclass(frozen=True)
class Span:
    """One run: a compile, a test or sanitizer run, a timing turn, a run again alone."""
    kind: ClassVar[str] = "span"
    stage: str
    student: str
    gpu: bool          # it held the GPU: a GPU lab's run, a timing turn of the device labs
    start_s: float     # seconds since the ledger was opened
    seconds: float


@dataclass(frozen=True)
class StageTime:
    """One stage of one student, from its start to its end (waiting for its turns included)."""
    kind: ClassVar[str] = "stage"
    stage: str
    student: str
    seconds: float
    cpu_s: float | None   # its runs' CPU time (the cgroups'): None where the grader has no cgroups


@dataclass(frozen=True)
class Closed:
    kind: ClassVar[str] = "closed"
    seconds: float        # since opened
    grader_cpu_s: float   # the grader's own process (Python), threads included


KINDS = {entry.kind: entry for entry in (Opened, Span, StageTime, Closed)}


@dataclass
class Grading:
    """One grading of a ledger file."""
    opened: Opened
    spans: list[Span] = field(default_factory=list)
    stages: list[StageTime] = field(default_factory=list)
    closed: Closed | None = None


class Ledger:
    """Appends to `path` (None: keeps nothing), one line a call, from any thread."""

    def __init__(self, path: Path | None, run: str, worker: str, prepared_s: float = 0.0) -> None:
        self.path = path
        self._t0 = time.monotonic()
        self._cpu0 = time.process_time()
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self._write(Opened(run, worker, started, round(prepared_s, 3)))

    def span(self, stage: str, student: str, gpu: bool, started: float, seconds: float) -> None:
        """A run that began at `started` (time.monotonic()) and took `seconds`."""
        self._write(Span(stage, student, gpu, round(started - self._t0, 3), round(seconds, 3)))

    def stage(self, stage: str, student: str, seconds: float, cpu_s: float | None) -> None:
        self._write(StageTime(stage, student, round(seconds, 3), None if cpu_s is None else round(cpu_s, 3)))

    def close(self) -> None:
        self._write(Closed(round(time.monotonic() - self._t0, 3), round(time.process_time() - self._cpu0, 3)))

    def _write(self, entry) -> None:
        if self.path is None:
            return
        line = json.dumps({"v": LEDGER_VERSION, "kind": entry.kind, **asdict(entry)}) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)


def read(path: Path) -> Grading | None:
    """The last grading of a ledger file (None: none there). Lines it cannot read are skipped."""
    last: Grading | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            fields = json.loads(line)
            kind = KINDS[fields.pop("kind")]
            if fields.pop("v") != LEDGER_VERSION:
                continue
            entry = kind(**fields)
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if isinstance(entry, Opened):
            last = Grading(entry)
        elif last is None:
            continue
        elif isinstance(entry, Span):
            last.spans.append(entry)
        elif isinstance(entry, StageTime):
            last.stages.append(entry)
        else:
            last.closed = entry
    return last
