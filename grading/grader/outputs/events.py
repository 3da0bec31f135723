"""A grading's progress as typed events: the only progress protocol between graders.

The grader emits events; a console (run/console.py) renders them as the text an instructor reads
(and counts the class's progress from them); a `--gpus` worker writes them as versioned JSON lines on a descriptor of
their own (`JsonLines`, `--events-fd`), and its parent decodes them (`decode`) and renders them the
same way. Nobody parses the console text.

    {"v": 1, "kind": "lab_verdict", "index": 3, "total": 40, "student": "ana", "lab": "02_atomic",
     "verdict": "PASSED", "detail": ""}
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from ..contract import EVENTS_VERSION

DETAIL_SHOWN = 110    # characters of a verdict's detail on the console
FINDING_SHOWN = 90    # of a sanitizer finding's first line


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = ""

    def text(self) -> str | None:
        """The console line (None: the event has none)."""
        return None


@dataclass(frozen=True)
class Note(Event):
    """A line about the whole run (its inputs, a warning, what is not available here)."""
    kind: ClassVar[str] = "note"
    line: str = ""

    def text(self) -> str:
        return self.line


@dataclass(frozen=True)
class ClassStarted(Event):
    """A grader begins its students (`students` of them, those already complete included)."""
    kind: ClassVar[str] = "class_started"
    students: int = 0


@dataclass(frozen=True)
class Refused(Event):
    """A folder of the class folder that is not graded, and why."""
    kind: ClassVar[str] = "refused"
    where: str = ""     # the class folder, as shown
    name: str = ""
    why: str = ""

    def text(self) -> str:
        return f'warning: {self.where}/"{self.name}" refused: {self.why}'


@dataclass(frozen=True)
class StudentEvent(Event):
    index: int = 0
    total: int = 0
    student: str = ""

    @property
    def prefix(self) -> str:
        return f"[student {self.index}/{self.total}] {self.student}"


@dataclass(frozen=True)
class StudentStarted(StudentEvent):
    kind: ClassVar[str] = "student_started"


@dataclass(frozen=True)
class StudentSkipped(StudentEvent):
    """Not graded by this grader: complete already (`record` names it), being graded by another
    grader of the output folder (ELSEWHERE), or finished by one since this grader looked (MEANWHILE)."""
    kind: ClassVar[str] = "student_skipped"
    ELSEWHERE: ClassVar[str] = "elsewhere"
    MEANWHILE: ClassVar[str] = "meanwhile"
    why: str = ""
    record: str = ""

    def text(self) -> str | None:
        if self.why == self.ELSEWHERE:
            return f"{self.prefix}  being graded by another grader of this output folder; left to it"
        if self.why == self.MEANWHILE:
            return None
        return f"{self.prefix}  already graded ({self.record}); skipped (--force redoes it)"


@dataclass(frozen=True)
class StudentWarning(StudentEvent):
    kind: ClassVar[str] = "student_warning"
    problem: str = ""

    def text(self) -> str:
        return f"warning: [student {self.index}/{self.total}] {self.student}: {self.problem}"


@dataclass(frozen=True)
class LabVerdict(StudentEvent):
    kind: ClassVar[str] = "lab_verdict"
    lab: str = ""
    verdict: str = ""
    detail: str = ""    # why, for a verdict the console explains ("" for none)

    def text(self) -> str:
        detail = " ".join(self.detail.split())
        shown = f"  ({detail[:DETAIL_SHOWN]}{'...' if len(detail) > DETAIL_SHOWN else ''})" if detail else ""
        return f"{self.prefix}  lab {self.lab}  {self.verdict}{shown}"


@dataclass(frozen=True)
class Retried(StudentEvent):
    """A run that failed for a shared resource, and what running it again alone gave (its note)."""
    kind: ClassVar[str] = "retried"
    lab: str = ""
    note: str = ""

    def text(self) -> str:
        return f"{self.prefix}  lab {self.lab}  {self.note}"


@dataclass(frozen=True)
class SanitizerFinding(StudentEvent):
    kind: ClassVar[str] = "sanitizer_finding"
    lab: str = ""
    tool: str = ""
    count: int = 0
    hazard: bool = False   # a hazard the tool reported (its first line), else why the log is no verdict
    what: str = ""

    def text(self) -> str:
        what = f": {self.what[:FINDING_SHOWN]}" if self.hazard else f" ({self.what[:FINDING_SHOWN]})"
        return f"{self.prefix}  lab {self.lab}  {self.tool}: {self.count} finding(s){what}"


@dataclass(frozen=True)
class TimingStarted(StudentEvent):
    kind: ClassVar[str] = "timing_started"
    labs: tuple[str, ...] = ()

    def text(self) -> str:
        return f"{self.prefix}  timing {', '.join(self.labs)} (between two reference runs)"


@dataclass(frozen=True)
class StudentDone(StudentEvent):
    kind: ClassVar[str] = "student_done"
    points: str = ""            # the total, as the gradebook shows it
    maximum: str = ""
    steps: dict = field(default_factory=dict)   # seconds per step
    verdicts: tuple[str, ...] = ()              # every lab's

    def text(self) -> str:
        steps = ", ".join(f"{what} {seconds:.1f} s" for what, seconds in self.steps.items())
        return f"{self.prefix}  total {self.points} / {self.maximum}  ({steps})"


KINDS: dict[str, type[Event]] = {cls.kind: cls for cls in (Note, ClassStarted, Refused, StudentStarted, StudentSkipped,
                                                           StudentWarning, LabVerdict, Retried, SanitizerFinding,
                                                           TimingStarted, StudentDone)}


class EventError(ValueError):
    """A line that is not an event of this version."""


def encode(event: Event) -> str:
    return json.dumps({"v": EVENTS_VERSION, "kind": event.kind, **dataclasses.asdict(event)}, ensure_ascii=False)


def decode(line: str) -> Event:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise EventError(f"not JSON: {line[:80]!r}") from None
    if not isinstance(data, dict) or data.get("v") != EVENTS_VERSION:
        raise EventError(f"not an event of version {EVENTS_VERSION}: {line[:80]!r}")
    cls = KINDS.get(data.get("kind"))
    if cls is None:
        raise EventError(f"unknown event kind {data.get('kind')!r}")
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {key: value for key, value in data.items() if key not in ("v", "kind")}
    if set(values) - fields:
        raise EventError(f"{cls.kind}: unknown fields {sorted(set(values) - fields)}")
    if "labs" in values or "verdicts" in values:
        values = {key: tuple(value) if key in ("labs", "verdicts") else value for key, value in values.items()}
    try:
        return cls(**values)
    except TypeError as exc:
        raise EventError(f"{cls.kind}: {exc}") from None


Sink = Callable[[Event], None]


class Lines:
    """Renders each event as its console line through `log`, and nothing else: a grader's default
    sink (the launchers give it a console that also counts the class's progress: run/console.py)."""

    def __init__(self, log: Callable[[str], None]):
        self.log = log

    def __call__(self, event: Event) -> None:
        line = event.text()
        if line is not None:
            self.log(line)


class JsonLines:
    """Writes each event as one JSON line on descriptor `fd` (a --gpus worker's channel to its parent)."""

    def __init__(self, fd: int):
        self.stream = os.fdopen(fd, "w", encoding="utf-8", buffering=1, closefd=True)
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.stream.write(encode(event) + "\n")
            self.stream.flush()

    def close(self) -> None:
        self.stream.close()
