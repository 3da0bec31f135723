"""One lab's section of a student's page: its verdict and points, the flags on it, why it failed
(the first failing case, the detail), how to see it again, then the evidence (evidence.py) and the
notes, each once. The instructor's page and the student's copy share it; the Audience decides the
words, what is scrubbed and which replay command is given."""

from __future__ import annotations

from ...judge.verdicts import COMPILE_ERROR, MISSING, NOT_RUN
from ...outputs.records import LabRecord, StudentRecord
from ..reports import format_points
from .attention import Concern, meaning, words
from .audience import Audience
from .evidence import block, compile_part, sanitizer_part, source_part, timing_part
from .markup import VERDICT_WORDS, attribute, text, verdict_span
from .replay import instructor_replay, needs_replay, student_replay
from .summary import lab_title

FAILURE_FIELDS = (("case", "case"), ("what", "input"), ("expected", "expected"), ("got", "got"), ("hint", "hint"))
_DID_NOT_PASS = "no performance points: the lab did not pass its tests"   # a record's note before scoring.py said why


def points_line(entry: LabRecord) -> str:
    score = entry.score
    if score.total is None:
        return "no points yet: not run" if entry.verdict == NOT_RUN else ""
    return (f"{format_points(score.total)} / {format_points(score.max)} points (correctness "
            f"{format_points(score.correctness)} / {format_points(score.correctness_max)}, performance "
            f"{format_points(score.performance)} / {format_points(score.performance_max)})"
            + (", a bonus lab" if score.bonus else ""))


def _first_failure(audience: Audience, entry: LabRecord) -> str:
    failure = (entry.tests.check or {}).get("first_failure")
    if not isinstance(failure, dict):
        return ""
    rows = "".join(f'<tr><th scope="row">{text(name)}</th><td><code>{audience.text(failure.get(key, ""))}</code></td></tr>'
                   for key, name in FAILURE_FIELDS if failure.get(key))
    return f'<table class="first-failure"><caption>the first failing case</caption>{rows}</table>'


def _replay(audience: Audience, record: StudentRecord, entry: LabRecord) -> str:
    if not needs_replay(entry):
        return ""
    if audience.student:
        case = "; the failing case above names its size, type and pattern" \
            if (entry.tests.check or {}).get("first_failure") else ""
        return (f'<p class="replay">See it again with your self-check, on its public inputs (this grading\'s inputs '
                f"stay with it{case}): <code>{audience.text(student_replay(entry))}</code></p>")
    if not record.seed:
        return '<p class="replay note">No replay command: the record names no seed.</p>'
    return (f'<p class="replay">Grade it again, sandboxed, on the same inputs (from the course checkout; $CLASS is '
            f"the class folder): <code>{audience.text(instructor_replay(record, entry))}</code></p>")


def _notes(audience: Audience, entry: LabRecord) -> list[str]:
    """The lab's notes, each once: one another note repeats whole is left out (the timing's note is
    also the score's), and one that only says the lab did not pass is said by its verdict."""
    notes = []
    for note in ([entry.benchmark.note] if entry.benchmark.note else []) + entry.score.notes + entry.notes:
        if note and note not in notes and not (note == _DID_NOT_PASS and entry.verdict in (MISSING, COMPILE_ERROR)):
            notes.append(note)
    return [note for note in notes if not any(note != other and note in other for other in notes)]


def _note(audience: Audience, note: str) -> str:
    """A note; one of several lines (a diff) keeps its lines, a diff's added and removed ones marked."""
    note = audience.scrub(note)
    if "\n" not in note:
        return f'<p class="note">{text(note)}</p>'
    first, rest = note.split("\n", 1)
    css = {"+": "added", "-": "removed", "@": "hunk"}
    lines = "".join(f'<span class="{css.get(line[:1], "same")}">{text(line)}</span>\n' for line in rest.splitlines())
    return f'<p class="note">{text(first)}</p><pre class="diff">{lines}</pre>'


def _flags(audience: Audience, concerns: list[Concern]) -> str:
    if not concerns:
        return ""
    items = "".join(f'<li data-kind="{attribute(c.kind)}"><strong>{text(words(c.kind))}</strong>: '
                    f"{audience.text(c.detail)} <span class=\"note\">({text(meaning(c.kind))})</span></li>"
                    for c in concerns)
    return f'<ul class="flags">{items}</ul>'


def lab_section(audience: Audience, record: StudentRecord, entry: LabRecord, concerns: list[Concern]) -> str:
    hazards, refused = bool(entry.sanitizer.hazards), entry.benchmark.time_refused
    heading = (f'<h3 id="lab-{attribute(entry.folder)}">{text(lab_title(entry.folder))} '
               f"{verdict_span(entry.verdict, hazards, refused)} {text(VERDICT_WORDS.get(entry.verdict, 'not graded'))}"
               "</h3>")
    printed = (f"<details><summary>what {audience.code()} printed during its tests</summary>"
               f"{block(audience, entry.tests.program_output)}</details>" if entry.tests.program_output else "")
    return (f'<section class="lab" data-lab="{attribute(entry.folder)}">{heading}<p>{text(points_line(entry))}</p>'
            f'{_flags(audience, concerns)}{block(audience, entry.detail, "detail")}{_first_failure(audience, entry)}'
            f"{_replay(audience, record, entry)}{compile_part(audience, entry)}{sanitizer_part(audience, entry)}"
            f"{printed}{timing_part(audience, entry)}{''.join(_note(audience, n) for n in _notes(audience, entry))}"
            f"{source_part(audience, entry)}</section>")
