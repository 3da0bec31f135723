"""One student's page (OUT/report/students/<file name>.html): lab by lab, the verdict and why, the
first failing case, the compiler's and the sanitizer's words, what the student's code printed, and
its times against the reference's."""

from __future__ import annotations

import shlex
from pathlib import PurePath

from ..records import LabRecord, StudentRecord
from ..reports import format_points, max_total_text
from ..student_paths import student_file_name
from ..verdicts import NOT_RUN
from .figures import Figure
from .markup import VERDICT_WORDS, href, page, pre, text, verdict_span

SANITIZER_LINES = 12
BENCHMARK_COLUMNS = (("type", "type", ""), ("n", "n", "num"), ("median_us", "median µs", "num"),
                     ("ref_median_us", "reference µs", "num"), ("ratio_to_ref", "ratio", "num"),
                     ("gbps", "GB/s", "num"), ("pct_roof", "% of read roof", "num"), ("status", "status", ""))


def student_page_path(student: str) -> str:
    """The page's path inside OUT/report/ (its name as the student's other files: student_paths.py)."""
    return f"students/{student_file_name(student)}.html"


def _points(entry: LabRecord) -> str:
    score = entry.score
    if score.total is None:
        return "no points yet" if entry.verdict == NOT_RUN else ""
    return (f"{format_points(score.total)} / {format_points(score.max)} points (correctness "
            f"{format_points(score.correctness)} / {format_points(score.correctness_max)}, performance "
            f"{format_points(score.performance)} / {format_points(score.performance_max)})"
            + (", a bonus lab" if score.bonus else ""))


def replay_command(record: StudentRecord, entry: LabRecord) -> str:
    """The command that grades this lab of this student again on the same inputs, into a folder of
    its own (the class's OUT keeps its records)."""
    class_folder = str(PurePath(record.submission).parent) if record.submission else "SUBMISSIONS"
    # --student=NAME: a name that starts with '-' is no option; a whole value that is a name is never split at commas
    return (f"python3 grading/grade.py {shlex.quote(class_folder)} {shlex.quote('--student=' + record.student)} "
            f"--labs {entry.folder[:2]} --seed {record.seed} --build-dir build/solutions --out replay --force")


def _first_failure(record: StudentRecord, entry: LabRecord) -> str:
    failure = (entry.tests.check or {}).get("first_failure")
    if not isinstance(failure, dict):
        return ""
    rows = "".join(f"<tr><th>{text(name)}</th><td><code>{text(failure.get(key, ''))}</code></td></tr>"
                   for key, name in (("case", "case"), ("what", "input"), ("expected", "expected"),
                                     ("got", "got"), ("hint", "hint")) if failure.get(key))
    replay = (f"<tr><th>replay</th><td><code>{text(replay_command(record, entry))}</code></td></tr>"
              if record.seed else "")
    return f'<table class="first-failure">{rows}{replay}</table>'


def _compile(entry: LabRecord) -> str:
    parts = []
    if entry.compile.refused:
        parts.append(f"<p>Refused headers: {text(', '.join(entry.compile.refused))}</p>")
    if entry.compile.output:
        opened = "" if entry.compile.ok else " open"
        parts.append(f"<details{opened}><summary>compiler output</summary>{pre(entry.compile.output)}</details>")
    return "".join(parts)


def _sanitizer(entry: LabRecord) -> str:
    if not entry.sanitizer.findings:
        return f'<p class="note">sanitizer: {text(entry.sanitizer.status)}</p>' if entry.sanitizer.status else ""
    rows = []
    for finding in entry.sanitizer.findings:
        report = "\n".join(str(line) for line in finding.get("report", [])[:SANITIZER_LINES])
        rows.append(f"<tr><td>{text(finding.get('tool'))}</td><td>{text(finding.get('status'))}</td>"
                    f"<td class=\"num\">{text(finding.get('count'))}</td><td>{text(finding.get('note'))}"
                    f"{pre(report)}</td></tr>")
    return ('<table class="sanitizer"><thead><tr><th>sanitizer</th><th>status</th><th class="num">findings</th>'
            f'<th>report</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _benchmark(entry: LabRecord) -> str:
    benchmark = entry.benchmark
    parts = []
    if benchmark.rows:
        head = "".join(f'<th class="{css}">{text(name)}</th>' for _, name, css in BENCHMARK_COLUMNS)
        body = "".join("<tr>" + "".join(f'<td class="{css}">{text(row.get(key, ""))}</td>'
                                        for key, _, css in BENCHMARK_COLUMNS) + "</tr>" for row in benchmark.rows)
        parts.append(f'<table class="timings"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    if benchmark.ratio is not None:
        parts.append(f"<p>Time over the reference's ({text(benchmark.statistic)}): {benchmark.ratio:.3f}&times;</p>")
    for line in ([benchmark.note] if benchmark.note else []) + entry.score.notes + entry.notes:
        parts.append(f'<p class="note">{text(line)}</p>')
    return "".join(parts)


def _lab(record: StudentRecord, entry: LabRecord) -> str:
    hazards = bool(entry.sanitizer.hazards)
    heading = (f'<h3 id="lab-{text(entry.folder)}">{text(entry.folder)} '
               f"{verdict_span(entry.verdict, hazards, entry.benchmark.time_refused)} "
               f"{text(VERDICT_WORDS.get(entry.verdict, 'not graded'))}</h3>")
    output = (f"<details><summary>what your code printed during its tests</summary>{pre(entry.tests.program_output)}"
              "</details>" if entry.tests.program_output else "")
    return (f'<section class="lab">{heading}<p>{text(_points(entry))}</p>{pre(entry.detail, "detail")}'
            f"{_first_failure(record, entry)}"
            f"{_compile(entry)}{_sanitizer(entry)}{output}{_benchmark(entry)}</section>")


def student_page(record: StudentRecord, figure: Figure) -> str:
    total = (f"{format_points(record.total)} / {max_total_text(record)}" if record.total is not None
             else "incomplete: left blank (" + ", ".join(f for f, e in record.labs.items() if e.verdict == NOT_RUN)
             + " not run: no GPU)")
    facts = [("total", total), ("date", record.date), ("GPU", record.gpu_name or "none"), ("input seed", record.seed),
             ("student code", record.sandbox), ("submission", record.submission)]
    summary = "".join(f"<tr><td><a href=\"#lab-{text(folder)}\">{text(folder)}</a></td><td>"
                      f"{verdict_span(entry.verdict, bool(entry.sanitizer.hazards), entry.benchmark.time_refused)}</td>"
                      f'<td class="num">{text(format_points(entry.score.total))}</td>'
                      f'<td class="num">{text(format_points(entry.score.max))}</td></tr>'
                      for folder, entry in record.labs.items())
    notes = "".join(f'<p class="note">{text(note)}</p>' for note in record.notes + record.benchmark.problems)
    ignored = f"<p>Files ignored: {text(', '.join(record.ignored))}</p>" if record.ignored else ""
    printed = (f"<details><summary>what your code printed in its timing run</summary>"
               f"{pre(record.benchmark.program_output)}</details>" if record.benchmark.program_output else "")
    body = (f'<nav><a href="../index.html">&larr; class report</a></nav><h1>{text(record.student)}</h1>'
            '<dl class="facts">' + "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in facts) + "</dl>"
            f'{notes}{ignored}<table class="labs"><thead><tr><th>lab</th><th>verdict</th><th class="num">points</th>'
            f'<th class="num">of</th></tr></thead><tbody>{summary}</tbody></table>'
            + (f'<div class="figure" id="figure-student">{figure.svg}</div>' if figure.svg else
               f'<p class="note">Figure: {text(figure.note)}</p>')
            + printed + "".join(_lab(record, entry) for entry in record.labs.values()))
    return page(f"{record.student}: reduction-labs report", body)
