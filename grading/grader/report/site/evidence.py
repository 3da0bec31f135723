"""A lab's evidence on a student's page: the compiler's words, the sanitizer's (with the cases each
tool ran), the timings against the reference's and the grader's clock, and the source the grader
compiled. Every text goes through the page's Audience (audience.py)."""

from __future__ import annotations

import os
import stat

from ...outputs.records import LabRecord
from .audience import Audience
from .markup import scroll

SANITIZER_LINES = 12
MAX_SOURCE_BYTES = 48 << 10   # a lab file is a few KiB; a page of twelve stays well under check_class.py's 1 MiB
BENCHMARK_COLUMNS = (("type", "type", ""), ("n", "n", "num"), ("median_us", "median µs", "num"),
                     ("ref_median_us", "reference µs", "num"), ("ratio_to_ref", "ratio", "num"),
                     ("gbps", "GB/s", "num"), ("pct_roof", "% of read roof", "num"), ("status", "status", ""))
CLOCK_COLUMNS = (("type", "type", ""), ("n", "n", "num"), ("claimed_us", "claimed µs", "num"),
                 ("excess_us", "beyond the claim µs", "num"), ("reference_excess_us", "the reference's µs", "num"),
                 ("allowed_us", "allowed µs", "num"), ("problem", "problem", ""))


def block(audience: Audience, value: str, css: str = "") -> str:
    return f'<pre class="{css}">{audience.text(value)}</pre>' if value else ""


def _table(audience: Audience, columns, rows: list[dict], css: str, label: str) -> str:
    head = "".join(f'<th scope="col" class="{c}">{audience.text(name)}</th>' for _, name, c in columns)
    body = "".join("<tr>" + "".join(f'<td class="{c}">{audience.text(row.get(key, ""))}</td>' for key, _, c in columns)
                   + "</tr>" for row in rows)
    return scroll(f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>', label)


def compile_part(audience: Audience, entry: LabRecord) -> str:
    parts = []
    if entry.compile.refused:
        parts.append(f"<p>Refused headers: {audience.text(', '.join(entry.compile.refused))} (a library reduction: "
                     "policy [compile])</p>")
    if entry.compile.output:
        opened = "" if entry.compile.ok else " open"
        parts.append(f"<details{opened}><summary>compiler output</summary>{block(audience, entry.compile.output)}"
                     "</details>")
    return "".join(parts)


def sanitizer_part(audience: Audience, entry: LabRecord) -> str:
    result = entry.sanitizer
    if not result.findings:
        return f'<p class="note">sanitizer: {audience.text(result.status)}</p>' if result.status else ""
    cases = (f"each tool ran {len(result.cases)} case(s): {', '.join(result.cases)}" if result.cases else
             "the cases each tool ran are not in this record (policy [sanitizer] cases)")
    rows = []
    for finding in result.findings:
        report = "\n".join(str(line) for line in finding.get("report", [])[:SANITIZER_LINES])
        rows.append(f"<tr><td>{audience.text(finding.get('tool'))}</td><td>{audience.text(finding.get('status'))}</td>"
                    f'<td class="num">{audience.text(finding.get("count"))}</td><td>{audience.text(finding.get("note"))}'
                    f"{block(audience, report)}</td></tr>")
    table = ('<table class="sanitizer"><thead><tr><th scope="col">sanitizer</th><th scope="col">status</th>'
             f'<th scope="col" class="num">findings</th><th scope="col">report</th></tr></thead><tbody>{"".join(rows)}'
             "</tbody></table>")
    return f'<p class="note">compute-sanitizer: {audience.text(cases)}.</p>{scroll(table, "sanitizer")}'


def timing_part(audience: Audience, entry: LabRecord) -> str:
    benchmark = entry.benchmark
    parts = []
    if benchmark.rows:
        parts.append(_table(audience, BENCHMARK_COLUMNS, benchmark.rows, "timings", "timings"))
    if benchmark.ratio is not None:
        parts.append(f"<p>Time over the reference's ({audience.text(benchmark.statistic)} over the rows above): "
                     f"{benchmark.ratio:.2f}&times;</p>")
    if benchmark.clock:
        verdict = ("contradicts the times claimed: no performance points" if benchmark.contradicted else
                   "agrees with the times claimed")
        parts.append(f"<p>The grader's own clock (outside the timed process) {verdict}. Per cell, the calls' time "
                     "beyond what they claimed, against the reference's and what is allowed:</p>"
                     + _table(audience, CLOCK_COLUMNS, benchmark.clock, "clock", "the grader's clock"))
    elif benchmark.contradicted:
        parts.append("<p>The grader's own clock contradicts the times claimed: no performance points.</p>")
    if benchmark.impossible:
        parts.append("<p>A time below the read roof of the same run (faster than memory can be read): refused, "
                     "no performance points.</p>")
    return "".join(parts)


def _read_source(path: str) -> tuple[str, str]:
    """The text of the file the grader compiled (a regular file it wrote, never through a link), and
    a note when there is none or it is cut."""
    if not path:
        return "", ""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "", "the source the grader compiled is no longer in the output folder (OUT/work/ removed)"
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return "", "the source is not a regular file"
        data = handle.read(MAX_SOURCE_BYTES + 1)
    cut = f"only its first {MAX_SOURCE_BYTES >> 10} KiB are shown" if len(data) > MAX_SOURCE_BYTES else ""
    return data[:MAX_SOURCE_BYTES].decode("utf-8", errors="replace"), cut


def source_part(audience: Audience, entry: LabRecord) -> str:
    """The file as compiled: the skeleton with the student's region spliced in, numbered as the
    compiler's messages number it."""
    source, note = _read_source(entry.source)
    if not source:   # the student has their source: no need to say where the grader's copy went
        return f'<p class="note">Source: {audience.text(note)}.</p>' if note and not audience.student else ""
    lines = source.splitlines()
    width = len(str(len(lines)))
    body = "".join(f'<span class="ln">{number:>{width}}</span> {audience.text(line, own=True)}\n'
                   for number, line in enumerate(lines, 1))
    shown = f"labs/{entry.folder}/{entry.file}"
    return (f'<details class="source" id="source-{audience.text(entry.folder)}"><summary>the source compiled '
            f"({audience.text(shown)}, {len(lines)} lines: the skeleton around {audience.region()})"
            f"{' — ' + audience.text(note) if note else ''}</summary>"
            f'<pre class="source">{body}</pre></details>')

