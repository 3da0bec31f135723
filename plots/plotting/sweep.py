"""Figure: reference time (or bandwidth) against n, per lab, with CUB and the roof."""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from .style import BASELINE_STYLES, _legend_outside, _new_axes, describe, is_power_of_two, short_n
from .timings import (BASELINE, BASELINE_LABS, DEFAULT_TYPE, REFERENCE, NoDataError, TimingsError, bandwidth_gbps,
                      lab_order, run_info)

def plot_sweep(rows, dtype=DEFAULT_TYPE, labs=None, metric="time", info=None) -> Figure:
    """Reference time or GB/s against n (log2 axis) per lab, with CUB and the roof, to show latency vs bandwidth."""
    if metric not in ("time", "gbps"):
        raise TimingsError(f"unknown metric '{metric}' (expected time or gbps)")
    typed = [t for t in rows if t.type == dtype and t.ok]
    chosen_labs = _check_sweep_labs(labs, lab_order([t for t in typed if t.student == REFERENCE]), dtype)
    value = (lambda t: t.median_us) if metric == "time" else bandwidth_gbps
    figure, ax = _new_axes(10.0, 6.0)
    sizes = set()
    for owner, lab, name, style in _sweep_curves(chosen_labs):
        points = sorted((t.n, value(t)) for t in typed if t.student == owner and t.lab == lab)
        if points:
            sizes.update(n for n, _ in points)
            ax.plot(*zip(*points), label=name, **style)
    _label_size_axis(ax, sorted(sizes))
    _label_sweep_metric(ax, metric)
    span = f"n = {short_n(min(sizes))}..{short_n(max(sizes))}"
    ax.set_title(f"Size sweep: reference {'time' if metric == 'time' else 'bandwidth'} vs n\n"
                 f"{describe(info or run_info(rows), None, dtype)} · {span}")
    ax.grid(which="major", alpha=0.3)
    _legend_outside(ax)
    return figure


def _sweep_curves(labs):
    """(owner, lab, legend name, line style) for each lab's reference curve, then CUB and the roof."""
    # Lab colours run along a gradient so the course order reads off the colour too.
    shades = matplotlib.colormaps["plasma"]
    for index, lab in enumerate(labs):
        color = shades(0.85 * index / max(len(labs) - 1, 1))
        yield REFERENCE, lab, lab, {"marker": "o", "linewidth": 1.4, "color": color}
    for lab in BASELINE_LABS:
        style = BASELINE_STYLES[lab]
        yield BASELINE, lab, style["name"], {"color": style["color"], "linestyle": style["linestyle"], "linewidth": 2.0}


def _check_sweep_labs(labs, available, dtype):
    if not available:
        raise NoDataError(f"no successful reference rows for type={dtype}; the sweep needs them")
    unknown = [lab for lab in (labs or []) if lab not in available]
    if unknown:
        raise TimingsError(f"lab(s) {', '.join(unknown)} have no reference rows for type={dtype} "
                           f"(available: {', '.join(available)})")
    return list(labs) if labs else available


def _label_size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"$2^{{{n.bit_length() - 1}}}$" if is_power_of_two(n) else str(n) for n in sizes])
    ax.minorticks_off()
    ax.set_xlabel("n (elements, log2 scale)")


def _label_sweep_metric(ax, metric):
    if metric == "gbps":
        # Linear so the climb to the bandwidth plateau reads at a glance.
        ax.set_ylabel("bandwidth (GB/s)")
        ax.set_ylim(bottom=0)
        return
    ax.set_yscale("log")
    ax.set_ylabel("median time (µs, log scale)")
    ax.text(0.99, 0.02, "flat: launch-latency bound\nrising with slope 1: bandwidth bound",
            transform=ax.transAxes, ha="right", va="bottom", fontsize=8, color="dimgray")


