"""The student records of an output folder: the only reader and writer of OUT/students/<name>.json.

Every record is signed with the folder's key (signing.py) and says its format version
(contract.json, "student_record"). A file that is not signed by this folder's key, is of another
version, or names another student than its file is no record: its student is graded again, and no
class output ever reads it.

The class outputs are rewritten after every student, from every record: a store keeps the records
it has read, each with a digest of its file's bytes, and reads a file again in full (parse, check
the signature, build the record) only when its bytes changed. Over a class of 200 that is one
record a time instead of 200 (a quadratic cost otherwise: issue 26).
"""

from __future__ import annotations

import hashlib
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
        self._read: dict[str, tuple[bytes, StudentRecord | None]] = {}   # complete()'s: digest, record

    def path(self, student: str) -> Path:
        return record_path(self.out, student)

    def save(self, record: StudentRecord) -> None:
        write_json(self.path(record.student), signing.sign(self.key, {**record.to_json(), VERSION_KEY: RECORD_VERSION}))

    def load(self, student: str) -> StudentRecord | None:
        """`student`'s record as this grader wrote it, or None: a record of its own, read now."""
        try:
            raw = self.path(student).read_bytes()
        except OSError:
            return None
        return self._parse(student, raw)

    def _parse(self, student: str, raw: bytes) -> StudentRecord | None:
        try:
            data = json.loads(raw.decode("utf-8"))
        except ValueError:   # UnicodeDecodeError and JSONDecodeError both
            return None
        if not (isinstance(data, dict) and signing.verify(self.key, data) and data.get(VERSION_KEY) == RECORD_VERSION
                and data.get("student") == student):
            return None
        return StudentRecord.from_json(data)

    def _load_kept(self, student: str) -> StudentRecord | None:
        """As load(), but the record this store read last time when the file's bytes are the same:
        shared between calls, so its readers (the class outputs) only read it."""
        try:
            raw = self.path(student).read_bytes()
        except OSError:
            self._read.pop(student, None)
            return None
        digest = hashlib.sha256(raw).digest()
        kept = self._read.get(student)
        if kept is not None and kept[0] == digest:
            return kept[1]
        record = self._parse(student, raw)
        self._read[student] = (digest, record)
        return record

    def complete(self, names: list[str]) -> list[StudentRecord]:
        """The complete records of `names`, in their order, to read only. A file of another name (a
        "phantom" student) is never read."""
        return [record for record in map(self._load_kept, names) if record is not None and record.complete]


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
