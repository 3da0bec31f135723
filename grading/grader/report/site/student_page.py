"""A student's page for the instructor (OUT/report/students/<file name>.html): what needs
attention, the labs at a glance (with a figure of the same ratios), then lab by lab the verdict
and why, the evidence and a replay command. The copy for the student is handout.py's."""

from __future__ import annotations

from ...judge.verdicts import NOT_RUN
from ...outputs.records import StudentRecord
from ..reports import format_points, max_total_text
from .attention import Concern, concern_rows, student_flags
from .audience import Audience
from .lab_section import lab_section
from .markup import attribute, href, page, scroll, text, verdict_span
from .paths import gradescope_copy_path, handout_path, record_copy_path, student_page_path  # noqa: F401
from .replay import CLASS_VARIABLE, class_folder
from .stats import shown_ratio
from .summary import lab_title
from .svg import Dot, figure, log_strip_svg


def gpu_words(record: StudentRecord) -> str:
    """The GPU the student's labs ran on: its name comes from the timing run, so a student with no
    lab timed ran on a GPU still, unnamed."""
    if record.gpu_name:
        return record.gpu_name
    if record.machine.get("gpu"):
        return "a GPU (its name is recorded by the timing run, and no lab was timed)"
    return "none: the GPU labs were not run"


def total_words(record: StudentRecord) -> str:
    if record.total is not None:
        return f"{format_points(record.total)} / {max_total_text(record)}"
    not_run = ", ".join(folder for folder, entry in record.labs.items() if entry.verdict == NOT_RUN)
    return f"incomplete: left blank ({not_run} not run: no GPU)"


def facts(pairs: list[tuple[str, str]]) -> str:
    return '<dl class="facts">' + "".join(f"<div><dt>{text(k)}</dt><dd>{text(v)}</dd></div>" for k, v in pairs) + "</dl>"


def labs_overview(audience: Audience, record: StudentRecord) -> str:
    """The labs at a glance, and the ratios of the timed ones in a figure: the same values."""
    rows = []
    for folder, entry in record.labs.items():
        ratio = shown_ratio(entry.benchmark.ratio) if entry.benchmark.ratio is not None else ""
        rows.append(f'<tr data-lab="{attribute(folder)}"><th scope="row"><a href="#lab-{attribute(folder)}">'
                    f"{text(lab_title(folder))}</a></th><td>"
                    f"{verdict_span(entry.verdict, bool(entry.sanitizer.hazards), entry.benchmark.time_refused)}</td>"
                    f'<td class="num">{text(format_points(entry.score.total))}</td>'
                    f'<td class="num">{text(format_points(entry.score.max))}</td>'
                    f'<td class="num ratio" data-value="{ratio}">{ratio + "×" if ratio else ""}</td></tr>')
    table = ('<table class="labs"><thead><tr><th scope="col">lab</th><th scope="col">verdict</th>'
             '<th scope="col" class="num">points</th><th scope="col" class="num">of</th>'
             f'<th scope="col" class="num">time / reference</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    timed = [(folder, entry.benchmark.ratio) for folder, entry in record.labs.items() if entry.benchmark.ratio is not None]
    chart = ""
    if timed:
        dots = [Dot(ratio, shown_ratio(ratio), record.student, folder) for folder, ratio in timed]
        desc = "; ".join(f"{folder}: {shown_ratio(ratio)}" for folder, ratio in timed)
        svg = log_strip_svg([folder for folder, _ in timed], dots, "student-figure", "Time over the reference's, per lab",
                            desc)
        statistic = next((e.benchmark.statistic for e in record.labs.values() if e.benchmark.statistic), "median")
        chart = figure(svg, f"The table's time / reference per timed lab ({text(statistic)} over the types and sizes "
                            "timed), on a log scale: left of the dashed line is faster than the reference.", "student")
    printed = (f"<details><summary>what {audience.code()} printed in its timing run</summary>"
               f"<pre>{audience.text(record.benchmark.program_output)}</pre></details>"
               if record.benchmark.program_output else "")
    return f'{scroll(table, "labs")}{chart}{printed}'


def _links(record: StudentRecord, copies: set[str]) -> str:
    links = [('<a href="../index.html">&larr; class report</a>'),
             f'<a href="{href("../" + handout_path(record.student))}">the page to send to {text(record.student)}</a>']
    for path, words in ((record_copy_path(record.student), "signed record (JSON)"),
                        (gradescope_copy_path(record.student), "Gradescope results")):
        if path in copies:
            links.append(f'<a href="{href("../" + path)}">{text(words)}</a>')
    return "<nav>" + " · ".join(links) + "</nav>"


def _flags_section(record: StudentRecord, concerns: list[Concern]) -> str:
    if not concerns:
        body = '<p id="flags-none">None.</p>'
    else:
        rows = concern_rows(concerns, {record.student}, with_student=False)
        body = scroll('<table class="attention"><thead><tr><th scope="col">what</th><th scope="col">lab</th>'
                      f'<th scope="col">detail</th></tr></thead><tbody>{rows}</tbody></table>', "needs attention")
    return f'<section id="flags" aria-labelledby="flags-heading"><h2 id="flags-heading">Needs attention</h2>{body}</section>'


def student_page(record: StudentRecord, copies: set[str] = frozenset()) -> str:
    audience = Audience()
    concerns = student_flags(record)
    ignored = f"<p>Files ignored: {text(', '.join(record.ignored))}</p>" if record.ignored else ""
    notes = "".join(f'<p class="note">{text(note)}</p>' for note in record.notes + record.benchmark.problems
                    if not note.startswith("ignored: "))
    shown = facts([("total", total_words(record)), ("date", record.date), ("GPU", gpu_words(record)),
                   ("input seed", record.seed), ("submission", record.submission),
                   (f"${CLASS_VARIABLE}", f"{class_folder([record]) or 'the class folder'} (the replay commands name it so)"),
                   ("student code", record.sandbox)])
    each = student_flags(record, grouped=False)
    labs = "".join(lab_section(audience, record, entry, [c for c in each if folder in c.labs])
                   for folder, entry in record.labs.items())
    body = (f"{_links(record, copies)}<h1>{text(record.student)}</h1>{shown}{notes}{ignored}"
            f"{_flags_section(record, concerns)}"
            f'<section id="labs" aria-labelledby="labs-heading"><h2 id="labs-heading">Labs</h2>'
            f"{labs_overview(audience, record)}</section>"
            f'<section id="lab-by-lab" aria-labelledby="lab-by-lab-heading"><h2 id="lab-by-lab-heading">Lab by lab</h2>'
            f"{labs}</section>")
    return page(f"{record.student}: reduction-labs report", body)
