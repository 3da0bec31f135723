"""Figure: the class leaderboard, one panel per lab, without a single name: each timed student's
time / the reference's (the timings' ratio_to_ref), fastest first, labelled only by rank. Ranks are
per lab, so nothing links one lab's bar to another's: the figure can be shown to the class.
A student learns their own place from their Gradescope leaderboard (grading/policy.toml
[gradescope]), where they pick their own pseudonym."""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from .style import REFERENCE_COLOR, STUDENT_COLOR, TEXT_BACKDROP, describe
from .timings import DEFAULT_N, DEFAULT_TYPE, NoDataError, run_info, select, student_names

DEFAULT_TOP = 10
PANELS_PER_ROW = 5


def ranked_ratios(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE) -> dict[str, list[tuple[int, float]]]:
    """Lab -> [(rank, ratio)], fastest first, for every student row with a measured ratio. Equal
    ratios share a rank (1, 2, 2, 4), so the order among them says nothing about who they are."""
    students = set(student_names(rows))
    by_lab: dict[str, list[float]] = {}
    for t in select(rows, n, dtype):
        if t.student in students and t.ok and t.ratio_to_ref is not None:
            by_lab.setdefault(t.lab, []).append(t.ratio_to_ref)
    ranked = {}
    for lab in sorted(by_lab):
        ratios = sorted(by_lab[lab])
        ranked[lab] = [(ratios.index(ratio) + 1, ratio) for ratio in ratios]
    return ranked


def plot_leaderboard(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE, top=DEFAULT_TOP, info=None) -> Figure:
    """Per lab, the `top` fastest ratios as bars with their rank; a line at 1.0, the reference."""
    ranked = ranked_ratios(rows, n, dtype)
    if not ranked:
        raise NoDataError(f"no student time with a ratio to the reference at n={n}, type={dtype}: "
                          "the leaderboard ranks measured labs only")
    columns = min(PANELS_PER_ROW, len(ranked))
    lines = math.ceil(len(ranked) / columns)
    shown = min(top, max(len(entries) for entries in ranked.values()))
    figure = Figure(figsize=(3.1 * columns, 0.8 + (0.28 * shown + 0.9) * lines))
    axes = figure.subplots(lines, columns, squeeze=False)
    for ax, (lab, entries) in zip(axes.flat, ranked.items()):
        _draw_lab(ax, lab, entries[:top], len(entries), shown)
    for ax in list(axes.flat)[len(ranked):]:
        ax.set_visible(False)
    figure.suptitle(f"Leaderboard: time / reference per lab, fastest first (rank only, no names)\n"
                    f"{describe(info or run_info(rows), n, dtype)}", fontsize=10)
    figure.tight_layout()
    return figure


def _draw_lab(ax, lab, entries, timed, shown):
    ys = range(len(entries))
    ratios = [ratio for _, ratio in entries]
    ax.barh(ys, ratios, color=STUDENT_COLOR, height=0.7)
    ax.axvline(1.0, color=REFERENCE_COLOR, linestyle="--", linewidth=1.2)
    for y, (_, ratio) in zip(ys, entries):
        ax.text(ratio, y, f" {ratio:.2f}x", va="center", ha="left", fontsize=7, bbox=TEXT_BACKDROP)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([f"#{rank}" for rank, _ in entries], fontsize=7)
    ax.set_ylim(shown - 0.5, -0.5)
    ax.set_xlim(0, max(ratios + [1.0]) * 1.35)
    ax.set_title(f"{lab}\n{timed} timed", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("time / reference (1 = reference, dashed)", fontsize=7)
