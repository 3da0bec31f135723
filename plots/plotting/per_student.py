"""Figure: one student against the references, lab by lab."""

from __future__ import annotations

from matplotlib.figure import Figure

from .style import (REFERENCE_COLOR, STUDENT_COLOR, TEXT_BACKDROP, _draw_baselines,
                    _label_lab_axis, _lab_figure_width, _legend_outside, _log_limits, _mark_top, _new_axes,
                    _require_student, _unsuccessful_labs, _ok_time, _baseline_values, _mark_not_run, describe,
                    verdict_color, verdict_words)
from .timings import (DEFAULT_N, DEFAULT_TYPE, NOT_RUN, PASSED, REFERENCE, cells_by_student_and_lab, display_names,
                      lab_order, require_measured, run_info, select)

def plot_student(rows, student, n=DEFAULT_N, dtype=DEFAULT_TYPE, anonymize=False, info=None) -> Figure:
    """One student's median per lab next to the reference's (grouped bars); failed and missing labs named."""
    _require_student(rows, student)
    chosen = select(rows, n, dtype)
    require_measured([t for t in chosen if t.student in (student, REFERENCE)], n, dtype)
    labs, cells = lab_order(chosen), cells_by_student_and_lab(chosen)
    shown = display_names(rows, anonymize)[student]
    reference = [_ok_time(cells.get((REFERENCE, lab))) for lab in labs]
    own = [_ok_time(cells.get((student, lab))) for lab in labs]
    figure, ax = _new_axes(_lab_figure_width(len(labs)) + 1.5)
    ax.set_yscale("log")
    bottom, top = _log_limits([t for t in reference + own if t] + _baseline_values(chosen), headroom=0.3)
    ax.set_ylim(bottom, top)
    _draw_bar_group(ax, reference, -0.2, bottom, REFERENCE_COLOR, "reference")
    _draw_bar_group(ax, own, +0.2, bottom, STUDENT_COLOR, shown)
    _draw_ratios(ax, reference, own)
    _draw_baselines(ax, chosen)
    _draw_student_failures(ax, labs, cells, student, shown)
    _label_lab_axis(ax, labs)
    ax.set_ylabel("median time (µs, log scale)")
    ax.set_title(f"{shown} vs reference\n{describe(info or run_info(rows), n, dtype)}")
    _legend_outside(ax)
    return figure


def _draw_bar_group(ax, times, offset, bottom, color, label):
    drawn = [(x + offset, t) for x, t in enumerate(times) if t]
    xs, heights = zip(*drawn) if drawn else ((), ())
    ax.bar(xs, [t - bottom for t in heights], bottom=bottom, width=0.38, color=color, edgecolor="black",
           linewidth=0.5, label=label)


def _draw_ratios(ax, reference, own):
    """Ratio to the reference over each student bar: >1 means slower than the reference."""
    for x, (ref, time) in enumerate(zip(reference, own)):
        if ref and time:
            ax.annotate(f"{time / ref:.2f}×", (x + 0.2, time), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7)


def _draw_student_failures(ax, labs, cells, student, shown):
    failed = _unsuccessful_labs(labs, cells, student)
    _mark_top(ax, [x + 0.2 for x, verdict in failed if verdict not in (NOT_RUN, PASSED)], f"{shown}: failed or missing")
    _mark_not_run(ax, [x + 0.2 for x, verdict in failed if verdict == NOT_RUN])
    for x, verdict in failed:
        # Written where the missing bar would stand, so the gap explains itself.
        ax.text(x + 0.2, 0.03, verdict_words(verdict), transform=ax.get_xaxis_transform(),
                rotation=90, ha="center", va="bottom", fontsize=8, color=verdict_color(verdict),
                fontweight="bold", bbox=TEXT_BACKDROP)
