"""The report's own figures, drawn as inline SVG from the numbers its tables show (stats.py).

Each figure is an <svg role="img"> with a <title> and a <desc> (its text alternative) inside a
<figure> whose caption names the statistic. Every mark carries its value in data- attributes, so a
test can compare the figure with the table beside it. Text in the figures is escaped like all text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .markup import attribute, text
from .stats import Bin

INK, GRID, MARK, REFERENCE = "#1d232a", "#d5dbe2", "#1f5f9e", "#c62828"
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _svg(width: int, height: int, ident: str, title: str, desc: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-labelledby="{ident}-title {ident}-desc" {FONT} id="{ident}">'
            f'<title id="{ident}-title">{text(title)}</title><desc id="{ident}-desc">{text(desc)}</desc>{body}</svg>')


def figure(svg: str, caption: str, ident: str) -> str:
    """An SVG figure with its caption (markup the caller escaped)."""
    return f'<figure class="chart" id="figure-{attribute(ident)}">{svg}<figcaption>{caption}</figcaption></figure>'


def _points(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def histogram_svg(bins: list[Bin], ident: str, title: str) -> str:
    """Vertical bars, one per bin, its count over it."""
    width, height, left, bottom, top = 460, 210, 24, 40, 20
    tallest = max((b.count for b in bins), default=0) or 1
    step = (width - left - 10) / max(len(bins), 1)
    parts = [f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="{INK}"/>']
    for index, b in enumerate(bins):
        x = left + index * step
        bar = (height - bottom - top) * b.count / tallest
        label = f"{_points(b.low)}–{_points(b.high)}" + ("+" if b.last else "")
        short = _points(b.low)
        parts.append(f'<rect class="bin" x="{x + 2:.1f}" y="{height - bottom - bar:.1f}" width="{step - 4:.1f}" '
                     f'height="{bar:.1f}" fill="{MARK}" data-low="{b.low:g}" data-high="{b.high:g}" '
                     f'data-count="{b.count}" data-last="{int(b.last)}"><title>{text(label)}: {b.count}</title></rect>')
        parts.append(f'<text x="{x + step / 2:.1f}" y="{height - bottom - bar - 4:.1f}" text-anchor="middle" '
                     f'fill="{INK}">{b.count}</text>')
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 14}" text-anchor="middle" fill="{INK}" '
                     f'font-size="10">{text(short)}</text>')
    parts.append(f'<text x="{width - 10}" y="{height - bottom + 14}" text-anchor="middle" fill="{INK}" font-size="10">'
                 f"{text(_points(bins[-1].high))}</text>" if bins else "")
    parts.append(f'<text x="{left}" y="{height - 6}" fill="{INK}">total points; over each bar, its students</text>')
    desc = "; ".join(f"{_points(b.low)} to {_points(b.high)}{' and above' if b.last else ''}: {b.count}" for b in bins)
    return _svg(width, height, ident, title, "Students per band of total points: " + desc, "".join(parts))


@dataclass(frozen=True)
class Dot:
    value: float     # a ratio, > 0
    shown: str       # the value as the table shows it
    student: str
    row: str         # the lab


def _ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks of each decade in [low, high]; every tenth of one when that gives fewer than three."""
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for steps in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7), tuple(m / 10 for m in range(10, 100))):
        ticks = [round(m * 10 ** e, 6) for e in decades for m in steps if low <= m * 10 ** e <= high]
        if len(ticks) >= 3:
            return ticks[:: math.ceil(len(ticks) / 7)]
    return ticks


def log_strip_svg(rows: list[str], dots: list[Dot], ident: str, title: str, desc: str) -> str:
    """One row per label, a dot per value on a log scale; a line at 1 (the reference)."""
    values = [dot.value for dot in dots if dot.value > 0] or [1.0]
    low, high = min(values + [1.0]) / 1.25, max(values + [1.0]) * 1.25
    width, left, right, row_height, top = 460, 122, 14, 24, 10
    height = top + row_height * len(rows) + 34

    def x(value: float) -> float:
        return left + (width - left - right) * (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))

    bottom = top + row_height * len(rows)
    parts = []
    for tick in _ticks(low, high):
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" stroke="{GRID}"/>'
                     f'<text x="{x(tick):.1f}" y="{bottom + 14}" text-anchor="middle" fill="{INK}" font-size="10">'
                     f"{tick:g}×</text>")
    parts.append(f'<line x1="{x(1.0):.1f}" y1="{top}" x2="{x(1.0):.1f}" y2="{bottom}" stroke="{REFERENCE}" '
                 'stroke-dasharray="4 3"/>')
    for index, row in enumerate(rows):
        y = top + row_height * index + row_height / 2
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}">{text(row)}</text>')
        in_row = [dot for dot in dots if dot.row == row]
        for order, dot in enumerate(in_row):
            jitter = ((order % 5) - 2) * 2.5
            parts.append(f'<circle class="dot" cx="{x(dot.value):.1f}" cy="{y + jitter:.1f}" r="4" fill="{MARK}" '
                         f'fill-opacity="0.7" data-row="{attribute(row)}" data-student="{attribute(dot.student)}" '
                         f'data-value="{attribute(dot.shown)}"><title>{text(dot.student)}: {text(dot.shown)}×</title>'
                         "</circle>")
    parts.append(f'<text x="{left}" y="{height - 4}" fill="{INK}">time / reference time (log scale; dashed: '
                 "the reference, 1×)</text>")
    return _svg(width, height, ident, title, desc, "".join(parts))
