"""The class page (OUT/report/index.html), in the order an instructor asks: who needs attention,
how the class did (summary, histogram), the gradebook, the leaderboard, then the files and the
run's provenance."""

from __future__ import annotations

from collections import Counter

from ...judge.verdicts import NOT_RUN
from ...manifest import Lab
from ...outputs.records import StudentRecord
from ..reports import unsandboxed
from .attention import attention_section, class_concerns, flagged_labs
from .copies import CLASS_FILES, FILES, PLOTS
from .figures import CLASS_FIGURES
from .gradebook import gradebook_section
from .leaderboard import leaderboard_section
from .markup import attribute, href, page, text
from .replay import CLASS_VARIABLE, class_folder
from .summary import summary_section

SECTIONS = (("attention", "Needs attention"), ("summary", "Summary"), ("gradebook-section", "Gradebook"),
            ("leaderboard", "Leaderboard"), ("files", "Files"), ("run", "The run"))


def _counted(values) -> str:
    """Distinct values with how many records have each: '2026-11-25 (38)'."""
    counts = Counter(str(value) for value in values if value)
    if len(counts) == 1:
        return next(iter(counts))
    return "; ".join(f"{value} ({count} students)" for value, count in counts.most_common()) or "unknown"


def _lede(records: list[StudentRecord], names: list[str]) -> str:
    gpus = _counted(record.gpu_name for record in records) if any(r.gpu_name for r in records) else (
        "a GPU (no lab was timed: its name is unknown)" if any(r.machine.get("gpu") for r in records) else
        "no GPU: the GPU labs were not run")
    sandbox = next((r.sandbox for r in records if unsandboxed(r)), "")
    warning = (f'<p class="warning">Student code ran {text(sandbox)}: this is not a gradebook to sign '
               "(docs/grading-security.md).</p>" if sandbox else "")
    not_run = sum(entry.verdict == NOT_RUN for record in records for entry in record.labs.values())
    no_gpu = (f'<p class="warning">{not_run} lab grading(s) not run: no GPU on the grading machine. Their totals '
              "are left blank, not 0.</p>" if not_run else "")
    dates = _counted(record.date for record in records) or "not yet"
    return (f'<p class="lede">{len(records)} of {len(names)} students graded · {text(dates)} · {text(gpus)}</p>'
            f"{warning}{no_gpu}")


def _files(copies: set[str], figures_note: str) -> str:
    files = [f'<li><a href="{href(FILES + "/" + name)}">{text(name)}</a></li>' for name in CLASS_FILES
             if f"{FILES}/{name}" in copies]
    figures = []
    for stem, title in CLASS_FIGURES:
        drawn = [f'<a href="{href(f"{PLOTS}/{stem}.{ext}")}">{ext}</a>' for ext in ("svg", "png")
                 if f"{PLOTS}/{stem}.{ext}" in copies]
        if drawn:
            figures.append(f"<li>{text(title)}: {' · '.join(drawn)}</li>")
    plots = (f'<p>The figures of plots/reduction_plots.py, drawn from timings.csv (their own statistic: the median '
             f'time of one type at one n, as their titles say):</p><ul>{"".join(figures)}</ul>' if figures else
             f'<p class="note">No figures of plots/reduction_plots.py: {text(figures_note or "none drawn")}</p>')
    return (f'<section id="files" aria-labelledby="files-heading"><h2 id="files-heading">Files</h2><p>Copied into '
            "this folder, so it can be shared alone: the class files, each student's signed record and Gradescope "
            f'results (on the student\'s page), and the figures.</p><ul>{"".join(files)}</ul>{plots}</section>')


def _run(records: list[StudentRecord]) -> str:
    facts = [("date", _counted(r.date for r in records)), ("GPU", _counted(r.gpu_name for r in records) or "none named"),
             ("input seed", _counted(r.seed for r in records)), ("student code", _counted(r.sandbox for r in records)),
             ("policy", _counted(r.policy for r in records)), ("run", _counted(r.run for r in records)),
             (f"${CLASS_VARIABLE}", class_folder(records) or "unknown")]
    body = "".join(f"<div><dt>{text(name)}</dt><dd>{text(value)}</dd></div>" for name, value in facts)
    return (f'<section id="run" aria-labelledby="run-heading"><h2 id="run-heading">The run</h2>'
            f'<dl class="facts">{body}</dl><p class="note">A value that differs between records is listed with its '
            f"count (two GPUs: two device nodes). The replay commands on the students' pages run from the course "
            f"checkout with {CLASS_VARIABLE} set to the class folder.</p></section>")


def class_page(records: list[StudentRecord], labs: list[Lab], names: list[str], bonus: set[str],
               refused: list[tuple[str, str]] = (), copies: set[str] = frozenset(), figures_note: str = "") -> str:
    concerns = class_concerns(records, names, list(refused))
    graded = {record.student for record in records}
    toc = " · ".join(f'<a href="#{attribute(anchor)}">{text(words)}</a>' for anchor, words in SECTIONS)
    body = (f"<h1>reduction-labs: class report</h1>{_lede(records, names)}<nav>{toc}</nav>"
            f"{attention_section(concerns, graded)}{summary_section(records, labs, names, concerns)}"
            f"{gradebook_section(records, labs, names, bonus, concerns)}"
            f"{leaderboard_section(records, labs, flagged_labs(concerns))}{_files(copies, figures_note)}{_run(records)}")
    return page("reduction-labs class report", body)
