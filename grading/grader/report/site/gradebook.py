"""The gradebook on the class page: a row per student of the class folder (graded or not), its
total beside its name, then a column per lab headed by the lab's number and name. Filters by name,
verdict, lab and flag, and sorting by any column with the mouse or the keyboard (report.js); a lab
column sorts by verdict (passed first, then wrong answer, ..., not run), then by points."""

from __future__ import annotations

from ...judge.flags import KINDS
from ...judge.verdicts import LEGEND, VERDICTS
from ...manifest import Lab
from ...outputs.records import StudentRecord
from ..reports import format_points
from .attention import Concern, words
from .markup import VERDICT_WORDS, attribute, href, scroll, sort_header, text, verdict_key, verdict_span
from .paths import student_page_path
from .summary import lab_name, lab_title


def _lab_points(record: StudentRecord, bonus: bool) -> float | None:
    values = [entry.score.total for entry in record.labs.values() if entry.score.bonus == bonus]
    return None if not values or any(value is None for value in values) else sum(values)


def _head(ordered: list[Lab], bonus: set[str]) -> str:
    labs = "".join(sort_header(f'{text(lab.folder[:2])}{"+" if lab.folder in bonus else ""}'
                               f'<span class="lab-name">{text(lab_name(lab.folder))}</span>', "num",
                               "lab bonus" if lab.folder in bonus else "lab",
                               f' data-lab="{attribute(lab.folder)}" title="{attribute(lab.folder)}"')
                   for lab in ordered)
    return (sort_header("student", "text", "name") + sort_header("total", "num", "num total")
            + sort_header("labs", "num", "num") + sort_header("bonus", "num", "num bonus") + labs)


def _cells(record: StudentRecord | None, name: str, ordered: list[Lab], bonus: set[str]) -> str:
    link = (f'<a href="{href(student_page_path(name))}">{text(name)}</a>' if record else
            f'{text(name)} <span class="note">(not graded yet)</span>')
    total = (f"{format_points(record.total)} / {format_points(record.max_total)}" if record and record.total is not None
             else ("incomplete" if record else ""))
    core, extra = (_lab_points(record, False), _lab_points(record, True)) if record else (None, None)
    cells = [f'<th scope="row" class="name" data-value="{attribute(name)}">{link}</th>',
             f'<td class="num total" data-value="{attribute(format_points(record.total) if record else "")}">'
             f"{text(total)}</td>",
             f'<td class="num" data-value="{attribute(format_points(core))}">{text(format_points(core))}</td>',
             f'<td class="num bonus" data-value="{attribute(format_points(extra))}">{text(format_points(extra))}</td>']
    for lab in ordered:
        entry = record.labs.get(lab.folder) if record else None
        css = "lab bonus" if lab.folder in bonus else "lab"
        if entry is None:
            cells.append(f'<td class="{css}" data-lab="{attribute(lab.folder)}" data-value=""></td>')
            continue
        hazards, refused = bool(entry.sanitizer.hazards), entry.benchmark.time_refused
        cells.append(f'<td class="{css}" data-lab="{attribute(lab.folder)}" data-verdict="{attribute(entry.verdict)}" '
                     f'data-value="{attribute(verdict_key(entry.verdict, entry.score.total))}" '
                     f'data-points="{attribute(format_points(entry.score.total))}">'
                     f"{verdict_span(entry.verdict, hazards, refused)}"
                     f'<span class="points">{text(format_points(entry.score.total))}</span></td>')
    return "".join(cells)


def _filters(labs: list[Lab], kinds: list[str]) -> str:
    verdicts = "".join(f'<option value="{attribute(v)}">{text(VERDICT_WORDS[v])}</option>' for v in VERDICTS)
    lab_options = "".join(f'<option value="{attribute(lab.folder)}">{text(lab_title(lab.folder))}</option>'
                          for lab in labs)
    flag_options = "".join(f'<option value="{attribute(k)}">{text(words(k))}</option>' for k in kinds)
    return ('<div class="filters" id="filters">'
            '<label>Name <input id="filter" type="search" autocomplete="off"></label>'
            f'<label>Verdict <select id="filter-verdict"><option value="">any</option>{verdicts}</select></label>'
            f'<label>in lab <select id="filter-lab"><option value="">any lab</option>{lab_options}</select></label>'
            '<label>Flag <select id="filter-flag"><option value="">any or none</option>'
            f'<option value="*">any flag</option>{flag_options}</select></label>'
            '<span id="filter-count" class="note" aria-live="polite"></span></div>')


def gradebook_section(records: list[StudentRecord], labs: list[Lab], names: list[str], bonus: set[str],
                      concerns: list[Concern]) -> str:
    by_name = {record.student: record for record in records}
    ordered = [lab for lab in labs if lab.folder not in bonus] + [lab for lab in labs if lab.folder in bonus]
    flags: dict[str, list[str]] = {}
    for concern in concerns:
        if concern.kind in KINDS:
            flags.setdefault(concern.student, []).extend(f"{concern.kind}:{lab}" for lab in (concern.labs or ("",)))
    kinds = [k for k in KINDS if any(item.startswith(k + ":") for items in flags.values() for item in items)]
    rows = "".join(f'<tr data-name="{attribute(name)}" data-order="{index}" '
                   f'data-flags="{attribute(" ".join(flags.get(name, [])))}">'
                   f"{_cells(by_name.get(name), name, ordered, bonus)}</tr>" for index, name in enumerate(names))
    table = (f'<table id="gradebook" class="sortable"><thead><tr>{_head(ordered, bonus)}</tr></thead>'
             f"<tbody>{rows}</tbody></table>")
    return (f'<section id="gradebook-section" aria-labelledby="gradebook-heading"><h2 id="gradebook-heading">Gradebook'
            f"</h2>{_filters(ordered, kinds)}{scroll(table, 'gradebook', 'gradebook')}"
            f'<p class="note">{text(LEGEND)}. NN+ is a bonus lab: its points are in the total, not in the maximum. '
            "A header sorts its column (a click, or Enter on it); a lab sorts by verdict, then points.</p></section>")
