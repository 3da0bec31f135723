"""Colours, number formats and the drawing helpers the figures share."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")  # grading machines and CI have no display

from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402  (must come after choosing the backend)

from .timings import BASELINE_LABS, CUB, NOT_RUN, PASSED, ROOF, RunInfo, TimingsError, baseline_us, student_names  # noqa: E402

# A student's name is drawn as its folder spells it, in any script. DejaVu Sans (matplotlib's own)
# has Latin, Greek and Cyrillic; matplotlib (3.6 and later) takes a glyph it lacks from the next
# family of font.family, so the installed fonts that hold CJK come after it (fonts-noto-cjk,
# fonts-wqy-zenhei). Where none is installed nothing changes: such a glyph is a box.
FALLBACK_FONTS = ("Noto Sans CJK JP", "Noto Sans CJK SC", "WenQuanYi Zen Hei", "Droid Sans Fallback")
_INSTALLED = {font.name for font in font_manager.fontManager.ttflist}
if any(name in _INSTALLED for name in FALLBACK_FONTS) and "DejaVu Sans" in _INSTALLED:
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", *(name for name in FALLBACK_FONTS if name in _INSTALLED)]

REFERENCE_COLOR = "#7f93ad"
STUDENT_COLOR = "tab:orange"
FAILED_COLOR = "tab:red"
MISSING_COLOR = "dimgray"
NOT_RUN_COLOR = "#4a78b5"   # not a failure: blue, a hollow circle, never the red x
NOT_RUN_LABEL = "not run (no GPU)"
NO_ROW = "missing"          # no row at all: the grader writes none for a MISSING lab
PASSED_COLOR = "tab:green"
PASSED_LABEL = "passed, not timed"
# Neutral colours for the baselines so they never clash with lab or student colours. The roof
# label goes under its line and CUB's over it: the two are close (CUB runs near the roof).
BASELINE_STYLES = {
    CUB: {"color": "dimgray", "linestyle": "--", "name": "CUB", "label_side": "bottom"},
    ROOF: {"color": "black", "linestyle": ":", "name": "read roof", "label_side": "top"},
}
STUDENT_MARKERS = "osD^vP<>hX*"
TEXT_BACKDROP = {"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1}  # keeps labels legible over lines


def is_power_of_two(n) -> bool:
    return n > 0 and n & (n - 1) == 0


def short_n(n) -> str:
    return f"2^{n.bit_length() - 1}" if is_power_of_two(n) else str(n)


def format_n(n) -> str:
    """'2^24 = 16777216': the exponent is how the course talks, the digits are what the CSV holds."""
    return f"{short_n(n)} = {n}" if is_power_of_two(n) else str(n)


def format_us(value) -> str:
    if value >= 100:
        return f"{value:.0f} µs"
    return f"{value:.1f} µs" if value >= 10 else f"{value:.2f} µs"


def describe(info: RunInfo, n=None, dtype=None) -> str:
    parts = [info.gpu] + ([f"n = {format_n(n)}"] if n else []) + ([dtype] if dtype else []) + [info.date]
    return " · ".join(parts)


def _new_axes(width, height=5.5):
    # Figure objects instead of pyplot: nothing piles up in pyplot's global registry when
    # one run draws a figure per student.
    figure = Figure(figsize=(width, height))
    return figure, figure.add_subplot()


def _lab_figure_width(lab_count):
    return max(8.0, 0.95 * lab_count + 3.0)


def _log_limits(values, headroom=0.0):
    """Log-axis limits around the values, with `headroom` (a fraction of the span) left on top for notes."""
    values = [v for v in values if v]
    if not values:
        return 1.0, 10.0
    low, high = min(values), max(values)
    span = max(math.log10(high / low), 0.5)
    return low / 10 ** (0.1 * span), high * 10 ** (headroom * span + 0.1)


def _label_lab_axis(ax, labs):
    ax.set_xticks(range(len(labs)))
    ax.set_xticklabels(labs, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(labs) - 0.4)
    ax.set_xlabel("lab")


def _draw_baselines(ax, rows):
    """CUB and the read roof as horizontal lines, labelled at the left where the plot is usually empty."""
    for lab in BASELINE_LABS:
        value = baseline_us(rows, lab)
        if value is None:
            continue
        style = BASELINE_STYLES[lab]
        text = f"{style['name']} {format_us(value)}"
        ax.axhline(value, color=style["color"], linestyle=style["linestyle"], linewidth=1.4, label=text)
        ax.text(0.005, value, text, transform=ax.get_yaxis_transform(), color=style["color"], fontsize=8,
                va=style["label_side"], ha="left", bbox=TEXT_BACKDROP)


def _mark_top(ax, xs, label, color=FAILED_COLOR):
    """'x' markers pinned to the top of the axes: a failed run has no time to put on the time axis."""
    if xs:
        ax.plot(xs, [0.975] * len(xs), transform=ax.get_xaxis_transform(), linestyle="none",
                marker="x", markersize=8, markeredgewidth=2, color=color, label=label, clip_on=False)


def _mark_not_run(ax, xs, label=NOT_RUN_LABEL):
    """Hollow circles at the top for labs that were not run: neither a time nor a failure."""
    if xs:
        ax.plot(xs, [0.975] * len(xs), transform=ax.get_xaxis_transform(), linestyle="none", marker="o",
                markersize=7, markerfacecolor="none", markeredgewidth=1.6, color=NOT_RUN_COLOR, label=label,
                clip_on=False)


def verdict_color(verdict) -> str:
    return {NOT_RUN: NOT_RUN_COLOR, NO_ROW: MISSING_COLOR, PASSED: PASSED_COLOR}.get(verdict, FAILED_COLOR)


def verdict_words(verdict) -> str:
    return {NOT_RUN: "not run", PASSED: PASSED_LABEL}.get(verdict, verdict)


def _note_top(ax, x, text, color=FAILED_COLOR):
    ax.text(x, 0.94, text, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=7.5, color=color)


def _legend_outside(ax):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _verdict(cell):
    return NO_ROW if cell is None else cell.status


def _unsuccessful_labs(labs, cells, student):
    """(x, verdict) for each lab where this student has no usable time, 'missing' when there is no row
    (NOT_RUN included: callers mark it apart from the failures)."""
    return [(x, _verdict(cells.get((student, lab)))) for x, lab in enumerate(labs)
            if _ok_time(cells.get((student, lab))) is None]


def _require_student(rows, student):
    if student not in student_names(rows):
        raise TimingsError(f"student '{student}' is not in the file (students: {', '.join(student_names(rows))})")



def _ok_time(cell):
    return cell.median_us if cell is not None and cell.ok else None


def _baseline_values(rows):
    return [v for v in (baseline_us(rows, lab) for lab in BASELINE_LABS) if v]


