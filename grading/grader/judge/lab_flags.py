"""The integrity flags a finished record implies: one rule per kind, over the record's own fields.

The engine applies them once a student is graded, before the record is signed complete, so every
flag the grader can tell from what it saw is data in the record (flags.py), not only words in a
note. The class report applies the same rules to records graded before flags were recorded, and
shows those as derived. A rule never adds a kind the record already carries for that lab: a flag
raised where it was detected (the timing's, the sanitizer's) keeps its own words.
"""

from __future__ import annotations

from ..outputs.records import LabRecord, StudentRecord
from .flags import Flag, add_flag
from .resources import RETRIED
from .submission import OUTSIDE_REGION_NOTE
from .verdicts import COMPILE_ERROR, COMPILE_TIMED_OUT, NOT_RUN, TIMEOUT

SANITIZER_KINDS = ("sanitizer_hazard", "sanitizer_unreadable")
# A test run's report channel, as the trusted checker counted it: lines only another process could
# have written there (the harness writes neither). Malformed lines are left out: a run killed in
# the middle of a line leaves one.
_CHANNEL = (("forged", "line(s) without the run's token"), ("after_end", "line(s) after the runner's end"))


def _sentence(detail: str, limit: int = 120) -> str:
    """A detail's first line, cut at a word before `limit` characters."""
    line = detail.splitlines()[0] if detail else ""
    return line if len(line) <= limit else line[:line.rfind(" ", 0, limit)] + " …"


def _edited_lines(note: str) -> int:
    return sum(1 for line in note.splitlines()[1:] if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _note_flags(folder: str, entry: LabRecord) -> list[Flag]:
    flags = []
    for note in entry.notes:
        if note.startswith(OUTSIDE_REGION_NOTE):
            flags.append(Flag("edit_outside_region", folder, f"{_edited_lines(note)} diff line(s) outside the STUDENT "
                                                             "CODE region (ignored: the skeleton's text was compiled)"))
        elif RETRIED in note:
            flags.append(Flag("retried_alone", folder, note.split(";")[0]))
    return flags


def _run_flags(folder: str, entry: LabRecord) -> list[Flag]:
    flags = []
    if entry.compile.refused:
        flags.append(Flag("refused_header", folder, "includes " + ", ".join(f"<{h}>" for h in entry.compile.refused)))
    check = entry.tests.check or {}
    if check.get("refused"):
        flags.append(Flag("harness_tamper", folder, "the module declares another lab than this one (the lab's "
                                                    "identity comes from the skeleton)"))
    counted = [f"{check.get(key)} {what}" for key, what in _CHANNEL if isinstance(check.get(key), int) and check[key] > 0]
    if counted:
        flags.append(Flag("harness_tamper", folder, "its test run's report channel held " + ", ".join(counted)))
    if entry.verdict == TIMEOUT or (entry.verdict == COMPILE_ERROR and entry.detail.startswith(COMPILE_TIMED_OUT)):
        flags.append(Flag("timeout", folder, _sentence(entry.detail)))
    if entry.verdict == NOT_RUN:
        flags.append(Flag("not_graded", folder, "not run: no GPU on the grading machine"))
    return flags


def _measured_flags(folder: str, entry: LabRecord) -> list[Flag]:
    flags = []
    for finding in entry.sanitizer.findings:
        if finding.get("status") != "clean" and finding.get("count"):
            hazard = finding.get("status") == "hazards"
            flags.append(Flag("sanitizer_hazard" if hazard else "sanitizer_unreadable", folder,
                              f"{finding.get('tool')}: " + (f"{finding.get('count')} hazard(s)" if hazard
                                                            else str(finding.get("note", ""))[:200])))
    benchmark = entry.benchmark
    if benchmark.contradicted:
        flags.append(Flag("time_contradicted", folder, benchmark.note))
    elif benchmark.impossible:
        flags.append(Flag("time_impossible", folder, benchmark.note))
    elif any(row.get("status") == "UNVERIFIED" for row in benchmark.rows):
        flags.append(Flag("time_unverified", folder, benchmark.note))
    return flags


def implied_flags(record: StudentRecord) -> list[Flag]:
    """Every flag the record's fields imply, lab by lab."""
    flags = []
    for folder, entry in record.labs.items():
        flags += _note_flags(folder, entry) + _run_flags(folder, entry) + _measured_flags(folder, entry)
    return flags


def _covered(flags: list[dict], flag: Flag) -> bool:
    """The record already carries this kind for this lab (both sanitizer kinds count as one)."""
    kinds = SANITIZER_KINDS if flag.kind in SANITIZER_KINDS else (flag.kind,)
    return any(f.get("kind") in kinds and f.get("lab") == flag.lab for f in flags)


def missing_flags(record: StudentRecord) -> list[Flag]:
    """The implied flags the record does not carry (all of them for a record graded before flags)."""
    return [flag for flag in implied_flags(record) if not _covered(record.flags, flag)]


def record_flags(record: StudentRecord) -> None:
    """Adds to the record every implied flag it does not carry yet (the engine, before signing it complete)."""
    for flag in missing_flags(record):
        add_flag(record.flags, flag.kind, flag.lab, flag.detail)
