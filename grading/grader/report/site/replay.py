"""Replay commands: how to see a lab's failure again.

The instructor's grades the one lab of the one student again, sandboxed, on the grading's own
inputs (its seed), from the course checkout: every path in it is relative to the checkout, and the
class folder is $CLASS (the page says which folder the records name). The student's copy runs the
student's own self-check of that lab, on the public inputs: the grading's seed is the class's, and
stays with the instructor."""

from __future__ import annotations

import shlex
from pathlib import PurePath

from ...judge.verdicts import MISSING, PASSED
from ...outputs.records import LabRecord, StudentRecord

CLASS_VARIABLE = "CLASS"


def needs_replay(entry: LabRecord) -> bool:
    """Every failing verdict, and a pass with a sanitizer finding or a refused time; not a missing file."""
    if entry.verdict == MISSING or entry.verdict is None:
        return False
    return entry.verdict != PASSED or bool(entry.sanitizer.hazards) or entry.benchmark.time_refused


def instructor_replay(record: StudentRecord, entry: LabRecord) -> str:
    return (f'python3 grading/grade.py "${CLASS_VARIABLE}" {shlex.quote("--student=" + record.student)} '
            f"--labs {entry.folder[:2]} --seed {record.seed} --build-dir build/solutions --out replay --force "
            "--require-sandbox")


def student_replay(entry: LabRecord) -> str:
    return f"python3 grading/grade.py --self --build-dir build/student --out build/self-check --labs {entry.folder[:2]}"


def class_folder(records: list[StudentRecord]) -> str:
    """The class folder the records name (the parent of each student's folder), or "" if none."""
    folders = sorted({str(PurePath(record.submission).parent) for record in records if record.submission})
    return ", ".join(folders)
