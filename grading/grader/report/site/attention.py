"""What needs the instructor's attention: every flag of the run, one row each, worst first.

The rows come from each record's integrity flags (StudentRecord.flags, flags.py), the flags the
record's fields imply that it does not carry (a record graded before flags were recorded:
lab_flags.py, shown as derived), the students of the class folder with no complete record yet, and
the class folder's refused folders. Each row links to the lab's section of the student's page,
where the evidence is.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...judge.flags import KINDS, Flag
from ...judge.lab_flags import missing_flags
from ...outputs.records import StudentRecord
from .markup import attribute, href, scroll, sort_header, text
from .paths import student_page_path

NOT_GRADED_YET = "not_graded_yet"
REFUSED_FOLDER = "refused_folder"
# Kinds of the report's own, beside flags.KINDS: what they mean, as the legend says it.
OWN_KINDS = {NOT_GRADED_YET: "a student of the class folder with no complete record (not graded yet, or not merged)",
             REFUSED_FOLDER: "a folder of the class folder that is not a student's: not graded at all"}
# Worst first: a kind not named here (one flags.KINDS gained since) comes after these, before ours.
ORDER = ("harness_tamper", "outside_view", "refused_header", "edit_outside_region", "time_contradicted",
         "time_impossible", "time_unverified", "sanitizer_hazard", "sanitizer_unreadable", "timeout",
         "retried_alone", "not_graded")
WORDS = {"harness_tamper": "harness tampering", "outside_view": "reached outside its view",
         "refused_header": "refused header", "edit_outside_region": "edit outside the region",
         "time_contradicted": "time contradicted", "time_impossible": "time impossible",
         "time_unverified": "time unverified", "sanitizer_hazard": "sanitizer hazard",
         "sanitizer_unreadable": "sanitizer unreadable", "timeout": "timeout", "retried_alone": "retried alone",
         "not_graded": "lab not graded", NOT_GRADED_YET: "student not graded", REFUSED_FOLDER: "refused folder"}
DERIVED = "derived from the record's fields: it was graded before the grader recorded flags"
# Kinds that leave a passing lab in the leaderboard: they say nothing about the code or its time.
RANKABLE = {"retried_alone", "not_graded"}


@dataclass(frozen=True)
class Concern:
    kind: str                  # a flags.KINDS kind, NOT_GRADED_YET or REFUSED_FOLDER
    student: str               # the student, or the refused folder's name
    labs: tuple[str, ...]      # the labs it concerns; () for the whole student
    detail: str
    derived: bool = False      # not in the record: derived from an older record's fields


def meaning(kind: str) -> str:
    return KINDS.get(kind) or OWN_KINDS.get(kind, kind)


def words(kind: str) -> str:
    return WORDS.get(kind, kind.replace("_", " "))


def rank(kind: str) -> int:
    known = list(ORDER) + [k for k in KINDS if k not in ORDER] + list(OWN_KINDS)
    return known.index(kind) if kind in known else len(known)


def student_flags(record: StudentRecord, grouped: bool = True) -> list[Concern]:
    """The record's flags and those it implies but does not carry, worst first; with `grouped`, its
    labs' 'not graded' flags made one row (a run without a GPU has one per GPU lab)."""
    recorded = [Flag.from_json(item) for item in record.flags if isinstance(item, dict) and item.get("kind") in KINDS]
    concerns = [Concern(f.kind, record.student, (f.lab,) if f.lab else (), f.detail) for f in recorded]
    concerns += [Concern(f.kind, record.student, (f.lab,) if f.lab else (), f.detail, True) for f in missing_flags(record)]
    not_run = [c for c in concerns if c.kind == "not_graded"]
    if grouped and len(not_run) > 1:
        labs = tuple(lab for c in not_run for lab in c.labs)
        concerns = [c for c in concerns if c.kind != "not_graded"] + [
            Concern("not_graded", record.student, labs, f"{len(labs)} labs not run: no GPU on the grading machine",
                    all(c.derived for c in not_run))]
    return sorted(concerns, key=lambda c: rank(c.kind))


def class_concerns(records: list[StudentRecord], names: list[str], refused: list[tuple[str, str]]) -> list[Concern]:
    graded = {record.student for record in records}
    concerns = [c for record in records for c in student_flags(record)]
    concerns += [Concern(NOT_GRADED_YET, name, (), "no complete, signed record in this output folder")
                 for name in names if name not in graded]
    concerns += [Concern(REFUSED_FOLDER, name, (), why) for name, why in refused]
    return sorted(concerns, key=lambda c: rank(c.kind))   # stable: class order within a kind


def flagged_labs(concerns: list[Concern]) -> set[tuple[str, str]]:
    """(student, lab) of the flags that keep a passing lab out of the leaderboard; lab "" for all."""
    return {(c.student, lab) for c in concerns if c.kind in KINDS and c.kind not in RANKABLE for lab in (c.labs or ("",))}


def _where(concern: Concern, linked: bool, in_page: bool) -> tuple[str, str]:
    """The student (a link to its page's flags) and the labs (links to their sections); on the
    student's own page, links to its sections."""
    if concern.kind == REFUSED_FOLDER:
        return f"<code>{text(concern.student)}</code>", ""
    if not linked:
        return text(concern.student), text(", ".join(concern.labs))
    page = "" if in_page else student_page_path(concern.student)
    who = f'<a href="{href(page, "flags")}">{text(concern.student)}</a>'
    labs = ", ".join(f'<a href="{href(page, "lab-" + lab)}">{text(lab)}</a>' for lab in concern.labs)
    return who, labs


def concern_rows(concerns: list[Concern], graded: set[str], with_student: bool = True) -> str:
    """Table rows, one per concern; without the student column on the student's own page."""
    rows = []
    for concern in concerns:
        who, labs = _where(concern, concern.student in graded, not with_student)
        derived = f' <span class="note derived" title="{attribute(DERIVED)}">(derived)</span>' if concern.derived else ""
        student = f"<td>{who}</td>" if with_student else ""
        rows.append(f'<tr data-kind="{attribute(concern.kind)}"><td data-value="{rank(concern.kind)}" '
                    f'title="{attribute(meaning(concern.kind))}">{text(words(concern.kind))}</td>{student}'
                    f"<td>{labs}</td><td>{text(concern.detail)}{derived}</td></tr>")
    return "".join(rows)


def attention_section(concerns: list[Concern], graded: set[str]) -> str:
    if not concerns:
        return ('<section id="attention" aria-labelledby="attention-heading"><h2 id="attention-heading">Needs '
                'attention</h2><p id="attention-none">None: no integrity flag, no timeout, no retry, no lab left '
                "ungraded, every student graded, no folder refused.</p></section>")
    counts = {}
    for concern in concerns:
        counts[concern.kind] = counts.get(concern.kind, 0) + 1
    summary = " · ".join(f'<span title="{attribute(meaning(k))}">{text(words(k))}: {n}</span>' for k, n in counts.items())
    head = (sort_header("what", "num") + sort_header("student") + '<th scope="col">lab</th><th scope="col">detail</th>')
    table = (f'<table id="attention-table" class="sortable"><thead><tr>{head}</tr></thead>'
             f"<tbody>{concern_rows(concerns, graded)}</tbody></table>")
    legend = "".join(f"<dt>{text(words(k))}</dt><dd>{text(meaning(k))}</dd>" for k in counts)
    derived = f'<p class="note">(derived): {text(DERIVED)}.</p>' if any(c.derived for c in concerns) else ""
    return (f'<section id="attention" aria-labelledby="attention-heading"><h2 id="attention-heading">Needs attention '
            f'({len(concerns)})</h2><p class="counts">{summary}</p>'
            f'{scroll(table, "needs attention", "tall")}{derived}'
            f'<details><summary>What each kind means</summary><dl class="legend">{legend}</dl></details></section>')
