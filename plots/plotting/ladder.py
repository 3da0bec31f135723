"""Figure: the reference ladder with step and cumulative speedups, optionally one student over it."""

from __future__ import annotations

from matplotlib.figure import Figure

from .style import (FAILED_COLOR, MISSING_COLOR, NOT_RUN_LABEL, REFERENCE_COLOR, STUDENT_COLOR, TEXT_BACKDROP, _draw_baselines,
                    _label_lab_axis, _lab_figure_width, _legend_outside, _log_limits, _mark_top, _new_axes, _note_top,
                    _require_student, _unsuccessful_labs, _ok_time, _baseline_values, _mark_not_run, describe,
                    format_us, verdict_color, verdict_words)
from .timings import (DEFAULT_N, DEFAULT_TYPE, NOT_RUN, PASSED, REFERENCE, NoDataError, cells_by_student_and_lab, display_names,
                      lab_order, ladder_speedups, run_info, select)

def plot_ladder(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE, student=None, anonymize=False, info=None) -> Figure:
    """Reference median per lab as bars annotated with step and cumulative speedup; roof and CUB as lines."""
    chosen = select(rows, n, dtype)
    labs, cells = lab_order(chosen), cells_by_student_and_lab(chosen)
    times = [_ok_time(cells.get((REFERENCE, lab))) for lab in labs]
    if not any(times):
        raise NoDataError(f"no successful reference rows at n={n}, type={dtype}; the ladder needs them")
    overlay = _overlay_times(rows, labs, cells, student)
    figure, ax = _new_axes(_lab_figure_width(len(labs)) + 1.5, 6.0)
    ax.set_yscale("log")
    bottom, top = _log_limits([t for t in times + overlay if t] + _baseline_values(chosen), headroom=0.45)
    ax.set_ylim(bottom, top)
    _draw_ladder_bars(ax, [cells.get((REFERENCE, lab)) for lab in labs], bottom)
    _draw_baselines(ax, chosen)
    if student is not None:
        _draw_ladder_overlay(ax, labs, cells, student, display_names(rows, anonymize)[student])
    _label_lab_axis(ax, labs)
    ax.set_ylabel("reference median time (µs, log scale)")
    ax.set_title(f"Reduction ladder: reference time per lab\n{describe(info or run_info(rows), n, dtype)}")
    _legend_outside(ax)
    return figure



def _overlay_times(rows, labs, cells, student):
    if student is None:
        return []
    _require_student(rows, student)
    return [_ok_time(cells.get((student, lab))) for lab in labs]


def _draw_ladder_bars(ax, reference_cells, bottom):
    times = [_ok_time(cell) for cell in reference_cells]
    drawn = [(x, t) for x, t in enumerate(times) if t]
    xs, heights = zip(*drawn)
    # Bars start at the axis floor: on a log axis a bar from 0 has no defined bottom.
    ax.bar(xs, [t - bottom for t in heights], bottom=bottom, width=0.7, color=REFERENCE_COLOR,
           edgecolor="black", linewidth=0.6, label="reference")
    for x, (cell, time, speedup) in enumerate(zip(reference_cells, times, ladder_speedups(times))):
        if time is None:
            text = "no reference" if cell is None else f"reference {cell.status}"
            ax.text(x, 0.03, text, transform=ax.get_xaxis_transform(), rotation=90, ha="center", va="bottom",
                    fontsize=8, color=FAILED_COLOR if cell else MISSING_COLOR, bbox=TEXT_BACKDROP)
            continue
        step, cumulative = speedup
        step_text = "step —" if x == xs[0] else f"step ×{step:.2f}"
        # One aligned row above all bars, like the book's table, so nothing drawn on the bars hides it.
        ax.text(x, 0.895, f"{format_us(time)}\n{step_text}\ntotal ×{cumulative:.{0 if cumulative >= 100 else 1}f}",
                transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=7.5)


def _draw_ladder_overlay(ax, labs, cells, student, shown):
    points = [(x, cells[(student, lab)].median_us) for x, lab in enumerate(labs)
              if (student, lab) in cells and cells[(student, lab)].ok]
    xs, ys = zip(*points) if points else ((), ())
    ax.plot(xs, ys, marker="D", linestyle="-", linewidth=1.2, color=STUDENT_COLOR, markersize=6,
            label=shown, zorder=4)
    failed = _unsuccessful_labs(labs, cells, student)
    _mark_top(ax, [x for x, verdict in failed if verdict not in (NOT_RUN, PASSED)], f"{shown}: failed or missing")
    _mark_not_run(ax, [x for x, verdict in failed if verdict == NOT_RUN], f"{shown}: {NOT_RUN_LABEL}")
    for x, verdict in failed:
        _note_top(ax, x, verdict_words(verdict), verdict_color(verdict))


