"""Figure: lab 10's coarsening study (grading/tools/coarsening_study.py): the time of a grid that follows
n against C, the 16-byte vectors each thread reads, one line per n, beside the lab's own
one-wave grid and CUB measured in the same runs. Rows: students `C=1`, `C=2`, ... and `one wave`."""

from __future__ import annotations

import re

import matplotlib
from matplotlib.figure import Figure

from .style import _legend_outside, _new_axes, describe, short_n
from .timings import BASELINE, CUB, DEFAULT_TYPE, NoDataError, run_info

VARIANT = re.compile(r"^C=(\d+)$")
ONE_WAVE = "one wave"   # the study's name for the lab's own grid (grading/tools/coarsening_study.py)


def coarsening_points(rows, dtype=DEFAULT_TYPE) -> dict[int, list[tuple[int, float]]]:
    """{n: [(C, median µs), ...] sorted by C} from the study's successful rows of one type."""
    points: dict[int, list[tuple[int, float]]] = {}
    for timing in rows:
        match = VARIANT.match(timing.student)
        if match and timing.type == dtype and timing.ok:
            points.setdefault(timing.n, []).append((int(match.group(1)), timing.median_us))
    return {n: sorted(values) for n, values in sorted(points.items())}


def _time_of(rows, dtype, n, student, lab=None):
    return next((t.median_us for t in rows if t.student == student and t.type == dtype and t.n == n and t.ok
                 and (lab is None or t.lab == lab)), None)


def plot_coarsening(rows, dtype=DEFAULT_TYPE, info=None) -> Figure:
    """Time against C (log2 axis), one curve per n; dashed: the one-wave grid, dotted: CUB."""
    points = coarsening_points(rows, dtype)
    if not points:
        raise NoDataError(f"no coarsening-study rows (students C=1, C=2, ...) for type={dtype}")
    figure, ax = _new_axes(10.0, 6.0)
    shades = matplotlib.colormaps["viridis"]
    for index, (n, values) in enumerate(points.items()):
        color = shades(0.85 * index / max(len(points) - 1, 1))
        ax.plot(*zip(*values), marker="o", linewidth=1.4, color=color, label=f"n = {short_n(n)}: C vectors per thread")
        for student, lab, style, name in ((ONE_WAVE, None, "--", "one wave (the lab's grid)"), (BASELINE, CUB, ":", "CUB")):
            value = _time_of(rows, dtype, n, student, lab)
            if value is not None:
                ax.axhline(value, color=color, linestyle=style, linewidth=1.1, label=f"n = {short_n(n)}: {name}")
    ticks = sorted({c for values in points.values() for c, _ in values})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(c) for c in ticks])
    ax.minorticks_off()
    ax.set_xlabel("C: 16-byte vectors per thread (the grid follows n: n / (4 C) threads)")
    ax.set_yscale("log")
    ax.set_ylabel("median time (µs, log scale)")
    ax.set_title(f"Lab 10: coarsening against one wave\n{describe(info or run_info(rows), None, dtype)}")
    ax.grid(which="major", alpha=0.3)
    _legend_outside(ax)
    return figure
