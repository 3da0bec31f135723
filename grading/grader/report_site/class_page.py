"""The class page (OUT/report/index.html): what the run was, the gradebook, the verdict counts per
lab, the leaderboard and the class figures."""

from __future__ import annotations

from collections import Counter

from ..manifest import Lab
from ..records import StudentRecord
from ..reports import class_sandbox, format_points
from ..verdicts import LEGEND, NOT_RUN, PASSED, VERDICTS
from .figures import CLASS_FIGURES, Figure
from .markup import VERDICT_WORDS, attribute, href, page, text, verdict_span
from .student_page import student_page_path

LEADERBOARD_TOP = 3


def _joined(values) -> str:
    return ", ".join(sorted({str(value) for value in values if value})) or "unknown"


def _run_facts(records: list[StudentRecord], names: list[str]) -> str:
    sandbox = class_sandbox(records)
    facts = [("graded", f"{len(records)} of {len(names)} students"), ("date", _joined(r.date for r in records)),
             ("GPU", _joined(r.gpu_name for r in records) if any(r.gpu_name for r in records) else "none (GPU labs not run)"),
             ("input seed", _joined(r.seed for r in records)), ("student code", sandbox or "unknown"),
             ("policy", _joined(r.policy for r in records)), ("run", _joined(r.run for r in records))]
    body = "".join(f"<dt>{text(name)}</dt><dd>{text(value)}</dd>" for name, value in facts)
    warning = (f'<p class="warning">Student code ran {text(sandbox)}: this is not a gradebook to sign '
               "(docs/grading-security.md).</p>" if sandbox.startswith("UNSANDBOXED") else "")
    return f'{warning}<dl class="facts">{body}</dl>'


def _lab_points(record: StudentRecord, bonus: bool) -> float | None:
    values = [entry.score.total for entry in record.labs.values() if entry.score.bonus == bonus]
    return None if not values or any(value is None for value in values) else sum(values)


def _gradebook(records: list[StudentRecord], labs: list[Lab], names: list[str], bonus: set[str]) -> str:
    by_name = {record.student: record for record in records}
    ordered = [lab for lab in labs if lab.folder not in bonus] + [lab for lab in labs if lab.folder in bonus]
    head = ('<th data-sort="text">student</th>' +
            "".join(f'<th data-sort="text" class="lab{" bonus" if lab.folder in bonus else ""}" '
                    f'title="{attribute(lab.folder)}">{text(lab.folder[:2] + ("+" if lab.folder in bonus else ""))}</th>'
                    for lab in ordered) +
            '<th data-sort="num" class="num">labs</th><th data-sort="num" class="num bonus">bonus</th>'
            '<th data-sort="num" class="num">total</th>')
    rows = []
    for index, name in enumerate(names):
        record = by_name.get(name)
        cells = [f'<td data-value="{attribute(name)}">' +
                 (f'<a href="{href(student_page_path(name))}">{text(name)}</a>' if record else
                  f'{text(name)} <span class="note">(not graded yet)</span>') + "</td>"]
        for lab in ordered:
            entry = record.labs.get(lab.folder) if record else None
            css = "lab bonus" if lab.folder in bonus else "lab"
            if entry is None:
                cells.append(f'<td class="{css}" data-value=""></td>')
                continue
            letter = verdict_span(entry.verdict, bool(entry.sanitizer.hazards), entry.benchmark.time_refused)
            cells.append(f'<td class="{css}" data-value="{attribute(entry.verdict)}" data-points="'
                         f'{attribute(format_points(entry.score.total))}">{letter}'
                         f'<span class="points">{text(format_points(entry.score.total))}</span></td>')
        core, extra = (_lab_points(record, False), _lab_points(record, True)) if record else (None, None)
        total = (f"{format_points(record.total)} / {format_points(record.max_total)}" if record and record.total is not None
                 else ("incomplete" if record else ""))
        cells += [f'<td class="num" data-value="{attribute(format_points(core))}">{text(format_points(core))}</td>',
                  f'<td class="num bonus" data-value="{attribute(format_points(extra))}">{text(format_points(extra))}</td>',
                  f'<td class="num total" data-value="{attribute(format_points(record.total) if record else "")}">'
                  f"{text(total)}</td>"]
        rows.append(f'<tr data-name="{attribute(name)}" data-order="{index}">' + "".join(cells) + "</tr>")
    return ('<p><label>Filter by name: <input id="filter" type="search" autocomplete="off"></label> '
            '<span class="note">Click a column to sort.</span></p>'
            f'<table id="gradebook" class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="note">{text(LEGEND)}. NN+ is a bonus lab: its points are in the total, not in the maximum.</p>')


def _verdict_counts(records: list[StudentRecord], labs: list[Lab]) -> str:
    counts = {lab.folder: Counter(record.labs[lab.folder].verdict for record in records if lab.folder in record.labs)
              for lab in labs}
    shown = [verdict for verdict in VERDICTS if any(count[verdict] for count in counts.values())]
    head = "<th>lab</th>" + "".join(f'<th class="num">{verdict_span(v)} {text(VERDICT_WORDS[v])}</th>' for v in shown)
    rows = "".join(f"<tr><td>{text(lab.folder)}</td>" +
                   "".join(f'<td class="num">{counts[lab.folder][v] or ""}</td>' for v in shown) + "</tr>" for lab in labs)
    return f'<table id="verdict-counts"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _leaderboard(records: list[StudentRecord], labs: list[Lab]) -> str:
    rows = []
    for lab in labs:
        ranked = sorted((entry.benchmark.ratio, record.student) for record in records
                        for entry in [record.labs.get(lab.folder)]
                        if entry and entry.verdict == PASSED and entry.benchmark.ratio is not None
                        and not entry.benchmark.time_refused)
        if ranked:
            best = ", ".join(f'<a href="{href(student_page_path(name), "lab-" + lab.folder)}">{text(name)}</a> '
                             f"({ratio:.2f}&times;)" for ratio, name in ranked[:LEADERBOARD_TOP])
            rows.append(f"<tr><td>{text(lab.folder)}</td><td>{best}</td></tr>")
    if not rows:
        return '<p class="note">No lab was timed (no GPU, or no lab passed).</p>'
    return ('<p class="note">Time over the reference\'s, fastest first (lower is faster); labs that passed and were '
            f'timed.</p><table id="leaderboard"><thead><tr><th>lab</th><th>fastest {LEADERBOARD_TOP}</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _figures(figures: dict[str, Figure]) -> str:
    if not any(figure.svg for figure in figures.values()):
        return ""   # the note above says why none is here
    parts = []
    for stem, title in CLASS_FIGURES:
        figure = figures.get(stem, Figure(stem, note="not drawn"))
        parts.append(f'<div class="figure" id="figure-{attribute(stem)}"><h3>{text(title)}</h3>' +
                     (figure.svg if figure.svg else f'<p class="note">{text(figure.note)}</p>') + "</div>")
    return "".join(parts)


def _refused(refused: list[tuple[str, str]]) -> str:
    if not refused:
        return ""
    rows = "".join(f"<tr><td><code>{text(name)}</code></td><td>{text(why)}</td></tr>" for name, why in refused)
    return (f'<h2 id="refused">Folders not graded ({len(refused)})</h2><p class="note">Entries of the class folder '
            "that are not a student's: no grade, no row, no files of their own. A refused folder may be a student's "
            "hand-in (rename it and grade again); hidden entries and files are ignored. Names are shown with their "
            "control and invisible characters written \\xNN or \\uNNNN.</p>"
            f'<table id="refused-folders"><thead><tr><th>folder</th><th>why</th></tr></thead><tbody>{rows}</tbody></table>')


def class_page(records: list[StudentRecord], labs: list[Lab], names: list[str], bonus: set[str],
               figures: dict[str, Figure], figures_note: str, refused: list[tuple[str, str]] = ()) -> str:
    not_run = sum(entry.verdict == NOT_RUN for record in records for entry in record.labs.values())
    no_gpu = (f'<p class="warning">{not_run} lab grading(s) not run: no GPU on the grading machine. Their totals '
              "are left blank, not 0.</p>" if not_run else "")
    body = (f"<h1>reduction-labs: class report</h1>{_run_facts(records, names)}{no_gpu}"
            '<p><a href="../gradebook.csv">gradebook.csv</a> · <a href="../timings.csv">timings.csv</a> · '
            '<a href="../junit.xml">junit.xml</a></p>'
            f'<h2 id="gradebook-heading">Gradebook</h2>{_gradebook(records, labs, names, bonus)}{_refused(refused)}'
            f"<h2>Verdicts by lab</h2>{_verdict_counts(records, labs)}"
            f"<h2>Leaderboard</h2>{_leaderboard(records, labs)}"
            f'<h2>Figures</h2><p class="note">{text(figures_note)}</p>{_figures(figures)}')
    return page("reduction-labs class report", body)
