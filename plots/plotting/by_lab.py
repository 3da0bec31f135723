"""Figure: every student's time per lab, the reference, CUB and the roof."""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from .style import (NOT_RUN_COLOR, STUDENT_MARKERS, _draw_baselines, _label_lab_axis, _lab_figure_width,
                    _legend_outside, _log_limits, _mark_not_run, _mark_top, _new_axes, _note_top, describe)
from .timings import (DEFAULT_N, DEFAULT_TYPE, REFERENCE, cells_by_student_and_lab, display_names, lab_order,
                      require_measured, run_info, select)


def plot_by_lab(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE, anonymize=False, info=None) -> Figure:
    """Each student's median per lab as jittered points, the reference as a bar-width line, CUB and roof lines."""
    chosen = select(rows, n, dtype)
    require_measured(chosen, n, dtype)
    labs, names = lab_order(chosen), display_names(rows, anonymize)
    cells = cells_by_student_and_lab(chosen)
    figure, ax = _new_axes(_lab_figure_width(len(labs)) + 1.5)
    ax.set_yscale("log")
    ax.set_ylim(*_log_limits([t.median_us for t in chosen if t.ok], headroom=0.3))
    _draw_reference_levels(ax, labs, cells)
    _draw_student_points(ax, labs, names, cells)
    _draw_baselines(ax, chosen)
    _draw_lab_failures(ax, labs, names, cells)
    _label_lab_axis(ax, labs)
    ax.set_ylabel("median time (µs, log scale)")
    ax.set_title(f"Median time per lab\n{describe(info or run_info(rows), n, dtype)}")
    ax.grid(axis="y", which="major", alpha=0.3)
    _legend_outside(ax)
    return figure


def _student_offset(index, count, spread=0.3):
    """Deterministic x jitter: students are spread evenly across the lab's slot, in sorted order."""
    return 0.0 if count <= 1 else -spread + 2 * spread * index / (count - 1)


def _draw_reference_levels(ax, labs, cells):
    points = [(x, cells[(REFERENCE, lab)].median_us) for x, lab in enumerate(labs)
              if (REFERENCE, lab) in cells and cells[(REFERENCE, lab)].ok]
    if points:
        xs, ys = zip(*points)
        ax.hlines(ys, [x - 0.4 for x in xs], [x + 0.4 for x in xs], colors="black", linewidth=2.5,
                  label="reference", zorder=3)


def _draw_student_points(ax, labs, names, cells):
    colors = matplotlib.colormaps["tab10"].colors
    for index, (student, shown) in enumerate(names.items()):
        offset = _student_offset(index, len(names))
        points = [(x + offset, cells[(student, lab)].median_us) for x, lab in enumerate(labs)
                  if (student, lab) in cells and cells[(student, lab)].ok]
        xs, ys = zip(*points) if points else ((), ())
        # A series even for a student with no successful run, so the legend lists everyone.
        ax.plot(xs, ys, linestyle="none", marker=STUDENT_MARKERS[index % len(STUDENT_MARKERS)],
                color=colors[index % len(colors)], markersize=6, alpha=0.85, label=shown, zorder=4)


def _draw_lab_failures(ax, labs, names, cells):
    failed_xs, not_run_xs = [], []
    for x, lab in enumerate(labs):
        failed = [i for i, s in enumerate(names) if (s, lab) in cells and cells[(s, lab)].failed]
        not_run = [i for i, s in enumerate(names) if (s, lab) in cells and cells[(s, lab)].not_run]
        missing = [s for s in names if (s, lab) not in cells]
        failed_xs += [x + _student_offset(i, len(names)) for i in failed]
        not_run_xs += [x + _student_offset(i, len(names)) for i in not_run]
        lines = [f"{len(failed)} failed"] * bool(failed) + [f"{len(missing)} missing"] * bool(missing)
        reference = cells.get((REFERENCE, lab))
        if reference is not None and not reference.ok:
            lines.append(f"reference {reference.status}")
        if lines:
            _note_top(ax, x, "\n".join(lines))
        elif not_run:
            _note_top(ax, x, f"{len(not_run)} not run", NOT_RUN_COLOR)
    _mark_top(ax, failed_xs, "failed run (status ≠ ok)")
    _mark_not_run(ax, not_run_xs)
