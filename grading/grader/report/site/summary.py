"""The class summary above the gradebook: the run in a few numbers, the labs in a table (pass rate,
mean and median points, the verdicts, '!' and '?'), and a histogram of the totals. Every number is
stats.py's, and each names its statistic."""

from __future__ import annotations

import statistics

from ...judge.verdicts import LETTERS, PASSED, VERDICTS
from ...manifest import Lab
from ...outputs.records import StudentRecord
from ..reports import format_points
from .attention import NOT_GRADED_YET, REFUSED_FOLDER, Concern
from .markup import VERDICT_WORDS, attribute, scroll, text, verdict_span
from .stats import LabSummary, histogram, lab_summaries, totals
from .svg import figure, histogram_svg


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.0f}%"


def _count(count: int, unit: str) -> str:
    return f"{count} {unit}" if count else "none"


def lab_title(folder: str) -> str:
    """'02 atomic' for 02_atomic: the number and the lab's name."""
    return f"{folder.partition('_')[0]} {lab_name(folder)}".strip()


def lab_name(folder: str) -> str:
    """'atomic' for 02_atomic, 'first add' for 06_first_add."""
    return folder.partition("_")[2].replace("_", " ")


def key_numbers(records: list[StudentRecord], names: list[str], concerns: list[Concern]) -> str:
    values = totals(records)
    maximum = max((record.max_total or 0.0 for record in records), default=0.0)
    all_passed = sum(1 for r in records if r.labs and all(e.verdict == PASSED for e in r.labs.values()))
    flagged = {c.student for c in concerns if c.kind not in ("not_graded", NOT_GRADED_YET, REFUSED_FOLDER)}
    not_run = sum(len(c.labs) for c in concerns if c.kind == "not_graded")
    facts = [("students graded", f"{len(records)} of {len(names)}"),
             ("median total", f"{format_points(statistics.median(values))} of {format_points(maximum)}" if values else
              "none yet (no student has a total)"),
             ("mean total", f"{format_points(round(statistics.fmean(values), 2))}" if values else "none yet"),
             ("every lab passed", _count(all_passed, "student(s)")),
             ("flagged", _count(len(flagged), "student(s)")),
             ("retried alone", _count(sum(1 for c in concerns if c.kind == "retried_alone"), "run(s)")),
             ("labs not graded", _count(not_run, "(no GPU)")),
             ("students not graded", _count(sum(1 for c in concerns if c.kind == NOT_GRADED_YET), "student(s)")),
             ("folders refused", _count(sum(1 for c in concerns if c.kind == REFUSED_FOLDER), "folder(s)"))]
    body = "".join(f'<div><dt>{text(name)}</dt><dd data-key="{attribute(name)}">{text(value)}</dd></div>'
                   for name, value in facts)
    return (f'<dl class="numbers">{body}</dl><p class="note">Totals include bonus labs (on top of the maximum); a '
            "student with a lab not run has no total yet and is left out of the median and the mean.</p>")


def _lab_row(summary: LabSummary, shown: list[str]) -> str:
    counts = "".join(f'<td class="num" data-verdict="{attribute(v)}">{summary.counts[v] or ""}</td>' for v in shown)
    bonus = " (bonus)" if summary.bonus else ""
    return (f'<tr data-lab="{attribute(summary.folder)}"><th scope="row">{text(lab_title(summary.folder))}{bonus}</th>'
            f'<td class="num">{summary.handed_in}</td>'
            f'<td class="num" data-passed="{summary.passed}" data-graded="{summary.graded}">'
            f"{summary.passed} of {summary.graded} ({_percent(summary.pass_rate)})</td>"
            f'<td class="num" data-mean="{attribute(format_points(summary.mean))}">{text(format_points(summary.mean))}</td>'
            f'<td class="num" data-median="{attribute(format_points(summary.median))}">'
            f"{text(format_points(summary.median))}</td><td class=\"num\">{text(format_points(summary.max_points))}</td>"
            f'{counts}<td class="num" data-hazards="{summary.hazards}">{summary.hazards or ""}</td>'
            f'<td class="num" data-refused="{summary.refused_times}">{summary.refused_times or ""}</td></tr>')


def lab_table(records: list[StudentRecord], labs: list[Lab]) -> str:
    summaries = lab_summaries(records, labs)
    shown = [v for v in VERDICTS if v != PASSED and any(s.counts[v] for s in summaries)]
    head = ('<th scope="col">lab</th><th scope="col" class="num">handed in</th>'
            '<th scope="col" class="num">passed (pass rate)</th>'
            '<th scope="col" class="num">mean points</th><th scope="col" class="num">median points</th>'
            '<th scope="col" class="num">of</th>'
            + "".join(f'<th scope="col" class="num" title="{attribute(VERDICT_WORDS[v])}">{verdict_span(v)}'
                      f'<span class="sr"> {text(VERDICT_WORDS[v])}</span></th>' for v in shown)
            + '<th scope="col" class="num" title="a sanitizer finding">!</th>'
              '<th scope="col" class="num" title="a time the grader refused">?</th>')
    rows = "".join(_lab_row(summary, shown) for summary in summaries)
    legend = ", ".join(f"{LETTERS[v]} {VERDICT_WORDS[v]}" for v in shown)
    return (scroll(f'<table id="lab-summary"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>', "labs")
            + '<p class="note">Pass rate: the students graded whose lab passed. Mean and median: of the points '
            f"the lab earned each student graded (labs not run left out). {text(legend)}"
            + ("; " if legend else "") + "! a lab that passed with a sanitizer finding; ? a lab that passed with a "
            "time the grader refused.</p>")


def histogram_figure(records: list[StudentRecord]) -> str:
    values = totals(records)
    if not values:
        return '<p class="note">No histogram: no student has a total yet.</p>'
    maximum = max((record.max_total or 0.0 for record in records), default=0.0)
    bins = histogram(values, maximum)
    svg = histogram_svg(bins, "totals", "Totals: students per band of points")
    return figure(svg, f"Totals of the {len(values)} students that have one, in ten bands of the maximum "
                       f"({text(format_points(maximum))} points); totals above it (bonus labs) count in the last band.",
                  "totals")


def summary_section(records: list[StudentRecord], labs: list[Lab], names: list[str], concerns: list[Concern]) -> str:
    return (f'<section id="summary" aria-labelledby="summary-heading"><h2 id="summary-heading">Class summary</h2>'
            f"{key_numbers(records, names, concerns)}<h3>Labs</h3>{lab_table(records, labs)}"
            f"<h3>Totals</h3>{histogram_figure(records)}</section>")
