"""The leaderboard: per lab, every passing and unflagged submission ranked by its time over the
reference's (the ratio its performance points come from), with its times and bandwidth; ties shown
as ties; a log-scale figure of the same ratios. Those that passed but are flagged are named below,
not ranked."""

from __future__ import annotations

from ...manifest import Lab
from ...outputs.records import StudentRecord
from .markup import attribute, href, scroll, sort_header, text
from .paths import student_page_path
from .stats import Ranked, leaderboard, shown_ratio
from .summary import lab_title
from .svg import Dot, figure, log_strip_svg


def statistic_words(records: list[StudentRecord]) -> str:
    """The ratio's statistic in words, from the records (policy [performance] statistic, [benchmark])."""
    statistic = next((entry.benchmark.statistic for record in records for entry in record.labs.values()
                      if entry.benchmark.statistic), "median")
    info = records[0].benchmark if records else None
    types = " and ".join(info.types) if info and info.types else "the types timed"
    sizes = ", ".join(info.sizes) if info and info.sizes else "the sizes timed"
    return (f"time / reference time: the {statistic} over {types} at n = {sizes} of each one's ratio of median "
            "times, as the performance points use it")


def _types(records: list[StudentRecord]) -> list[str]:
    return list(records[0].benchmark.types) if records and records[0].benchmark.types else ["float", "int"]


def _number(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _table(lab: str, ranked: list[Ranked], types: list[str]) -> str:
    head = (sort_header("rank", "num", "num") + sort_header("student") + sort_header("ratio", "num", "num")
            + "".join(sort_header(f"{text(t)} µs", "num", "num") for t in types)
            + "".join(sort_header(f"{text(t)} GB/s", "num", "num") for t in types))
    rows = []
    for entry in ranked:
        page = student_page_path(entry.student)
        tie = ' <span class="tie">tie</span>' if entry.tied else ""
        cells = [f'<td class="num rank" data-value="{entry.rank}">{entry.rank}{tie}</td>',
                 f'<td data-value="{attribute(entry.student)}"><a href="{href(page, "lab-" + lab)}">'
                 f"{text(entry.student)}</a></td>",
                 f'<td class="num ratio" data-value="{shown_ratio(entry.ratio)}">{shown_ratio(entry.ratio)}×</td>']
        cells += [f'<td class="num" data-value="{_number(entry.times.get(t), 1)}">{_number(entry.times.get(t), 1)}</td>'
                  for t in types]
        cells += [f'<td class="num" data-value="{_number(entry.gbps.get(t), 0)}">{_number(entry.gbps.get(t), 0)}</td>'
                  for t in types]
        rows.append(f'<tr data-student="{attribute(entry.student)}">{"".join(cells)}</tr>')
    table = (f'<table class="sortable leaderboard" data-lab="{attribute(lab)}"><thead><tr>{head}</tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table>')
    return (f'<details class="board" id="board-{attribute(lab)}"><summary>{text(lab_title(lab))}: {len(ranked)} ranked, '
            f"fastest {shown_ratio(ranked[0].ratio)}×</summary>{scroll(table, 'leaderboard of ' + lab)}</details>")


def leaderboard_section(records: list[StudentRecord], labs: list[Lab], flagged: set[tuple[str, str]]) -> str:
    boards, left_out = leaderboard(records, labs, flagged)
    heading = '<section id="leaderboard" aria-labelledby="leaderboard-heading"><h2 id="leaderboard-heading">Leaderboard</h2>'
    if not boards:
        return heading + ('<p class="note">Nothing ranked: no lab passed with a usable timing (no GPU, or none '
                          "passed).</p></section>")
    statistic = statistic_words(records)
    types = _types(records)
    rows = [lab.folder for lab in labs if lab.folder in boards]
    dots = [Dot(entry.ratio, shown_ratio(entry.ratio), entry.student, lab) for lab in rows for entry in boards[lab]]
    desc = "; ".join(f"{lab}: {len(boards[lab])} ranked, from {shown_ratio(boards[lab][0].ratio)} to "
                     f"{shown_ratio(boards[lab][-1].ratio)}" for lab in rows)
    svg = log_strip_svg(rows, dots, "leaderboard-figure", "Leaderboard: time over the reference's, per lab", desc)
    chart = figure(svg, f"Each dot is one ranked submission: {text(statistic)}. Log scale: 0.5× is as far left of "
                        "the dashed reference line as 2× is right of it. The tables below give every value.",
                   "leaderboard")
    unranked = ""
    if left_out:
        links = ", ".join(f'<a href="{href(student_page_path(s), "lab-" + lab)}">{text(s)} ({text(lab)})</a>'
                          for s, lab in left_out)
        unranked = f'<p id="not-ranked">Passed with a ratio but not ranked, for a flag (see Needs attention): {links}.</p>'
    return (heading + f'<p class="note">Ranked by {text(statistic)}; lower is faster. Equal to two decimals is a tie '
            "(the same rank). Times and GB/s: the student's median at the largest n. Only labs that passed with no "
            f"flag are ranked.</p>{chart}{''.join(_table(lab, boards[lab], types) for lab in rows)}{unranked}</section>")
