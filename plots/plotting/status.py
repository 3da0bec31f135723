"""Figure: what happened to each student's lab, measured or not. The one figure a run without a GPU
still has: every time figure needs measured data, and this one shows why there is none."""

from __future__ import annotations

from matplotlib.figure import Figure

from .style import (FAILED_COLOR, NO_ROW, NOT_RUN_LABEL, PASSED_LABEL, _label_lab_axis, _lab_figure_width,
                    _legend_outside, _new_axes, _verdict, describe, verdict_color)
from .timings import (DEFAULT_N, DEFAULT_TYPE, NOT_RUN, PASSED, NoDataError, cells_by_student_and_lab, display_names,
                      lab_order, run_info, select, student_names)

TIMED_COLOR = "tab:green"
# (legend label, marker, filled) per kind of cell; the legend lists only the kinds present.
KINDS = {
    "timed": ("timed", "o", True),
    PASSED: (PASSED_LABEL, "o", False),
    NOT_RUN: (NOT_RUN_LABEL, "o", False),
    "failed": ("failed (verdict written beside it)", "x", True),
    NO_ROW: ("missing (no row)", "s", False),
}


def plot_status(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE, anonymize=False, info=None) -> Figure:
    """Students down, labs across: a mark per cell saying timed, not run, failed (with its verdict) or missing."""
    students = student_names(rows)
    if not students:
        raise NoDataError("no student rows: the status figure shows students' labs")
    chosen = select(rows, n, dtype)
    labs, cells, names = lab_order(rows), cells_by_student_and_lab(chosen), display_names(rows, anonymize)
    figure, ax = _new_axes(_lab_figure_width(len(labs)) + 2.5, 1.2 + 0.45 * len(students))
    placed = {kind: [] for kind in KINDS}
    for y, student in enumerate(students):
        for x, lab in enumerate(labs):
            cell = cells.get((student, lab))
            verdict = "timed" if cell is not None and cell.ok else _verdict(cell)
            kind = verdict if verdict in KINDS else "failed"
            placed[kind].append((x, y))
            if kind == "failed":
                ax.annotate(verdict, (x, y), xytext=(7, 0), textcoords="offset points", va="center",
                            fontsize=6.5, color=FAILED_COLOR)
    for kind, points in placed.items():
        if points:
            label, marker, filled = KINDS[kind]
            color = TIMED_COLOR if kind == "timed" else verdict_color(kind)
            ax.plot(*zip(*points), linestyle="none", marker=marker, markersize=8, color=color, label=label,
                    markerfacecolor=color if filled else "none", markeredgewidth=1.8)
    _label_lab_axis(ax, labs)
    ax.set_yticks(range(len(students)))
    ax.set_yticklabels([names[s] for s in students])
    ax.set_ylim(len(students) - 0.5, -0.5)
    ax.set_title(f"What ran, per student and lab\n{describe(info or run_info(rows), n, dtype)}")
    ax.grid(alpha=0.25)
    _legend_outside(ax)
    return figure
