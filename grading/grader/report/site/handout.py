"""The page an instructor may send to one student (OUT/report/handouts/<file name>.html): that
student's verdicts, the evidence and how to see each failure again, in the second person. Nothing
of a classmate (no link, no name, no class figure), of the grading machine (its paths are replaced
by words, audience.py) or of the class's input seed (the replay is the student's own self-check)."""

from __future__ import annotations

from ...outputs.records import StudentRecord
from .attention import meaning, student_flags, words
from .audience import Audience
from .lab_section import lab_section
from .markup import attribute, page, text
from .student_page import facts, gpu_words, labs_overview, total_words


def _flags(audience: Audience, record: StudentRecord) -> str:
    concerns = student_flags(record)
    if not concerns:
        return '<p id="flags-none">Nothing: no flag on your grading.</p>'
    items = "".join((f'<li data-kind="{attribute(c.kind)}">'
                     + ", ".join(f'<a href="#lab-{attribute(lab)}">{text(lab)}</a>' for lab in c.labs)
                     + (": " if c.labs else "") + f"<strong>{text(words(c.kind))}</strong> ({text(meaning(c.kind))}): "
                     f"{audience.text(c.detail)}</li>") for c in concerns)
    return f'<ul class="flags">{items}</ul>'


def handout(record: StudentRecord) -> str:
    audience = Audience.for_student(record)
    concerns = student_flags(record)
    shown = facts([("total", total_words(record)), ("graded on", record.date), ("GPU", gpu_words(record))])
    each = student_flags(record, grouped=False)
    labs = "".join(lab_section(audience, record, entry, [c for c in each if folder in c.labs])
                   for folder, entry in record.labs.items())
    body = (f"<h1>Your grading: {text(record.student)}</h1>{shown}"
            '<p class="note">Every lab you handed in was compiled inside its official skeleton (only your STUDENT CODE '
            "region counts), tested on inputs new to this grading, checked with compute-sanitizer and timed against "
            "the reference. Below: each lab's verdict, why, and how to see it again.</p>"
            f'<section id="flags" aria-labelledby="flags-heading"><h2 id="flags-heading">What your instructor will '
            f"look at</h2>{_flags(audience, record)}</section>"
            f'<section id="labs" aria-labelledby="labs-heading"><h2 id="labs-heading">Labs</h2>'
            f"{labs_overview(audience, record)}</section>"
            f'<section id="lab-by-lab" aria-labelledby="lab-by-lab-heading"><h2 id="lab-by-lab-heading">Lab by lab</h2>'
            f"{labs}</section>")
    return page(f"{record.student}: your reduction-labs grading", body)
