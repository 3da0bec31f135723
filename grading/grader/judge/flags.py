"""Integrity flags: what the grader noticed about a student's run that an instructor should look at.

A flag is data in the student's record (`StudentRecord.flags`), not only words in a note: the
class report lists every flag of a run in one place, Gradescope and JUnit quote them, and tests
count them. Each flag names its kind (one of KINDS), the lab it concerns ("" for the whole
student) and one sentence of detail in the grader's words (never the student's text unquoted).
A flag decides nothing by itself: the points were already settled by the step that raised it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

# kind -> what it means, as the report's "needs attention" heading says it
KINDS = {
    "time_contradicted": "a reported time the grader's own clock contradicts: no performance points",
    "time_impossible": "a time below the read roof of the same run: no performance points",
    "time_unverified": "a timed call returned a wrong sum, or the timing run's report was unusable",
    "sanitizer_hazard": "compute-sanitizer reported hazards",
    "sanitizer_unreadable": "compute-sanitizer's own result was missing or garbled: counted as a finding",
    "edit_outside_region": "edits outside the STUDENT CODE region (ignored, shown as a diff)",
    "refused_header": "a library reduction's header (CUB, Thrust, cooperative-groups collectives)",
    "outside_view": "the compile or the run reached for a file outside what it may see",
    "harness_tamper": "the lab tried to change the harness or the grader's programs",
    "retried_alone": "a run failed while other students' runs shared the machine and was run again alone",
    "timeout": "a run stopped at its time limit",
    "not_graded": "a lab was not graded (no GPU here)",
}


@dataclass(frozen=True)
class Flag:
    kind: str       # one of KINDS
    lab: str = ""   # the lab folder, or "" for the whole student
    detail: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown flag kind {self.kind!r} (flags.KINDS)")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Flag":
        return cls(str(data.get("kind", "")), str(data.get("lab", "")), str(data.get("detail", "")))


def add_flag(flags: list[dict], kind: str, lab: str = "", detail: str = "") -> None:
    """Appends a flag to a record's `flags` (as JSON), once: the same kind, lab and detail twice is one flag."""
    entry = Flag(kind, lab, detail).to_json()
    if entry not in flags:
        flags.append(entry)
