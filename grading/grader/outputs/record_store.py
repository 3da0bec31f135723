"""The student records of an output folder: the only reader and writer of OUT/students/<name>.json.

Every record is signed with the folder's key (signing.py) and says its format version
(contract.json, "student_record"). A file that is not signed by this folder's key, is of another
version, or names another student than its file is no record: its student is graded again, and no
class output ever reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import signing
from ..contract import RECORD_VERSION
from .atomic_files import write_json
from .records import StudentRecord
from .student_paths import record_path

VERSION_KEY = "record_version"


class RecordStore:
    def __init__(self, out: Path, key: bytes):
        self.out = Path(out)
        self.key = key

    def path(self, student: str) -> Path:
        return record_path(self.out, student)

    def save(self, record: StudentRecord) -> None:
        write_json(self.path(record.student), signing.sign(self.key, {**record.to_json(), VERSION_KEY: RECORD_VERSION}))

    def load(self, student: str) -> StudentRecord | None:
        """`student`'s record as this grader wrote it, or None."""
        try:
            data = json.loads(self.path(student).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not (isinstance(data, dict) and signing.verify(self.key, data) and data.get(VERSION_KEY) == RECORD_VERSION
                and data.get("student") == student):
            return None
        return StudentRecord.from_json(data)

    def complete(self, names: list[str]) -> list[StudentRecord]:
        """The complete records of `names`, in their order. A file of another name (a "phantom"
        student) is never read."""
        return [record for record in map(self.load, names) if record is not None and record.complete]


def observed(out: Path) -> dict[str, StudentRecord]:
    """Every complete record of this version in OUT, signed or not, by student: what a tool that
    observes gradings (the throughput benchmark) compares. Never a grading's input: that is
    RecordStore, which believes only its own signature."""
    records = {}
    for path in sorted((Path(out) / "students").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("complete") and data.get(VERSION_KEY) == RECORD_VERSION:
            record = StudentRecord.from_json(data)
            records[record.student] = record
    return records
