"""Draw the reduction-labs figures (by lab, speedup ladder, per student, size sweep) from a timings CSV."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # grading machines and CI have no display

from matplotlib.figure import Figure  # noqa: E402  (must come after choosing the backend)

REFERENCE = "reference"
BASELINE = "baseline"
CUB = "cub"
ROOF = "roof"
OK = "ok"
BASELINE_LABS = (CUB, ROOF)
ELEMENT_BYTES = {"int": 4, "float": 4}
REQUIRED_COLUMNS = ("student", "lab", "type", "n", "median_us", "status")
NUMERIC_COLUMNS = ("median_us", "min_us", "iqr_us", "gbps", "pct_roof", "ref_median_us", "ratio_to_ref")
FIGURES = ("by-lab", "ladder", "per-student", "sweep")
FORMATS = ("png", "svg", "pdf")
DEFAULT_N = 1 << 24
DEFAULT_TYPE = "float"

REFERENCE_COLOR = "#7f93ad"
STUDENT_COLOR = "tab:orange"
FAILED_COLOR = "tab:red"
MISSING_COLOR = "dimgray"
# Neutral colours for the baselines so they never clash with lab or student colours. The roof
# label goes under its line and CUB's over it: the two are close (CUB runs near the roof).
BASELINE_STYLES = {
    CUB: {"color": "dimgray", "linestyle": "--", "name": "CUB", "label_side": "bottom"},
    ROOF: {"color": "black", "linestyle": ":", "name": "read roof", "label_side": "top"},
}
STUDENT_MARKERS = "osD^vP<>hX*"
TEXT_BACKDROP = {"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1}  # keeps labels legible over lines


class TimingsError(ValueError):
    """Input that cannot be plotted: a malformed file or a selection that matches nothing."""


class NoDataError(TimingsError):
    """The file is fine but holds nothing for the requested figure (e.g. no reference rows at that n)."""


@dataclass(frozen=True)
class Timing:
    """One row of timings.csv; measurements are None when the run did not succeed."""

    row: int
    student: str
    lab: str
    type: str
    n: int
    status: str
    median_us: float | None = None
    min_us: float | None = None
    iqr_us: float | None = None
    gbps: float | None = None
    pct_roof: float | None = None
    ref_median_us: float | None = None
    ratio_to_ref: float | None = None
    gpu: str = ""
    date: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


@dataclass(frozen=True)
class RunInfo:
    """Where and when the timings were taken, for titles."""

    gpu: str = "unknown GPU"
    date: str = "unknown date"


# ---------------------------------------------------------------------------
# Loading


class _Record:
    """One CSV record read by column name; errors carry the file, row and column."""

    def __init__(self, path, row, columns, cells):
        self.path, self.row, self.columns, self.cells = path, row, columns, cells

    def error(self, column, problem):
        return TimingsError(f"{self.path}: row {self.row}, column '{column}': {problem}")

    def text(self, column, required=False):
        index = self.columns.get(column)
        value = self.cells[index].strip() if index is not None and index < len(self.cells) else ""
        if required and not value:
            raise self.error(column, "value is empty")
        return value

    def count(self, column):
        value = self.text(column, required=True)
        if not re.fullmatch(r"\d+", value) or int(value) == 0:
            raise self.error(column, f"expected a positive integer, got '{value}'")
        return int(value)

    def number(self, column, required=False):
        value = self.text(column, required=required)
        if not value:
            return None
        try:
            number = float(value)
        except ValueError:
            raise self.error(column, f"expected a number, got '{value}'") from None
        if not math.isfinite(number):
            raise self.error(column, f"expected a finite number, got '{value}'")
        return number


def load_timings(path) -> list[Timing]:
    """Read and validate a timings CSV; raise TimingsError naming the row and column of any problem."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            columns = _read_header(path, reader)
            timings = [
                _parse_record(_Record(path, reader.line_num, columns, cells))
                for cells in reader
                if any(cell.strip() for cell in cells)
            ]
    except FileNotFoundError:
        raise TimingsError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TimingsError(f"{path}: is a directory, expected a CSV file") from None
    except UnicodeDecodeError:
        raise TimingsError(f"{path}: not UTF-8 text") from None
    except csv.Error as exc:
        raise TimingsError(f"{path}: row {reader.line_num}: unreadable CSV ({exc})") from None
    if not timings:
        raise TimingsError(f"{path}: no data rows after the header")
    _reject_duplicates(path, timings)
    return timings


def _read_header(path, reader) -> dict[str, int]:
    header = next(reader, None)
    if header is None or not any(cell.strip() for cell in header):
        raise TimingsError(f"{path}: file is empty; expected a header row starting with {','.join(REQUIRED_COLUMNS)}")
    columns = {}
    for index, name in enumerate(header):
        columns.setdefault(name.strip().lower(), index)
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        raise TimingsError(f"{path}: row 1 (header): missing required column {names}")
    return columns


def _parse_record(record: _Record) -> Timing:
    student = record.text("student", required=True)
    lab = record.text("lab", required=True)
    _check_lab_matches_student(record, student, lab)
    element_type = record.text("type", required=True).lower()
    if element_type not in ELEMENT_BYTES:
        raise record.error("type", f"unknown type '{element_type}' (expected {' or '.join(ELEMENT_BYTES)})")
    n = record.count("n")
    status = record.text("status", required=True)
    status = OK if status.lower() == OK else status.upper()
    # Failed runs may carry empty or leftover numbers; they are never plotted, so they are not parsed.
    numbers = {column: None for column in NUMERIC_COLUMNS}
    if status == OK:
        numbers = {column: record.number(column, required=(column == "median_us")) for column in NUMERIC_COLUMNS}
        if numbers["median_us"] <= 0:
            raise record.error("median_us", f"expected a positive time, got '{record.text('median_us')}'")
    return Timing(
        row=record.row, student=student, lab=lab, type=element_type, n=n, status=status,
        gpu=record.text("gpu"), date=record.text("date"), **numbers,
    )


def _check_lab_matches_student(record, student, lab):
    # CUB and the roof are not labs; mixing them up would silently add a bogus lab column.
    if (student == BASELINE) != (lab in BASELINE_LABS):
        expected = "'cub' or 'roof'" if student == BASELINE else "a lab folder name (cub/roof are baseline-only)"
        raise record.error("lab", f"'{lab}' on a '{student}' row; expected {expected}")


def _reject_duplicates(path, timings):
    first_row = {}
    for timing in timings:
        key = (timing.student, timing.lab, timing.type, timing.n)
        if key in first_row:
            raise TimingsError(
                f"{path}: row {timing.row}, columns 'student,lab,type,n': duplicate of row {first_row[key]} {key}"
            )
        first_row[key] = timing.row


def find_sidecar(csv_path) -> str | None:
    """The run's JSON sidecar sits next to the CSV with the same stem (timings.csv -> timings.json)."""
    candidate = os.path.splitext(csv_path)[0] + ".json"
    return candidate if os.path.isfile(candidate) else None


def load_sidecar(path) -> RunInfo:
    """Read "device"."name" and "date" from a run's JSON metadata; empty strings when absent."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise TimingsError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise TimingsError(f"{path}: row {exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TimingsError(f"{path}: expected a JSON object at the top level")
    device = data.get("device") if isinstance(data.get("device"), dict) else {}
    date = str(data.get("date") or "").split("T")[0]  # a full timestamp is more than a title needs
    return RunInfo(gpu=str(device.get("name") or ""), date=date)


def run_info(rows, sidecar: RunInfo | None = None) -> RunInfo:
    """GPU and date from the CSV columns, falling back to the sidecar, then to 'unknown'."""
    sidecar = sidecar or RunInfo(gpu="", date="")
    gpus = [name for name, _ in Counter(t.gpu for t in rows if t.gpu).most_common()]
    dates = sorted({t.date for t in rows if t.date})
    gpu = " / ".join(gpus) or sidecar.gpu or RunInfo.gpu
    date = (dates[0] if len(dates) == 1 else f"{dates[0]}..{dates[-1]}") if dates else (sidecar.date or RunInfo.date)
    return RunInfo(gpu=gpu, date=date)


# ---------------------------------------------------------------------------
# Selecting


def lab_order(rows) -> list[str]:
    """Lab folder names sort into course order ("01_host_sum" < ... < "10_two_step")."""
    return sorted({t.lab for t in rows if t.student != BASELINE})


def student_names(rows) -> list[str]:
    return sorted({t.student for t in rows if t.student not in (REFERENCE, BASELINE)})


def display_names(rows, anonymize=False) -> dict[str, str]:
    """Real name -> shown name; numbering comes from the whole file so it is the same in every figure."""
    names = student_names(rows)
    if anonymize:
        return {name: f"student {index}" for index, name in enumerate(names, 1)}
    return {name: name for name in names}


def select(rows, n, dtype) -> list[Timing]:
    """Rows measured at one size and element type; NoDataError lists what the file does have."""
    chosen = [t for t in rows if t.n == n and t.type == dtype]
    if not chosen:
        available = sorted({(t.type, t.n) for t in rows})
        listing = ", ".join(f"{kind} n={size}" for kind, size in available)
        raise NoDataError(f"no measurements for n={n}, type={dtype} (the file has: {listing})")
    return chosen


def cells_by_student_and_lab(rows) -> dict[tuple[str, str], Timing]:
    return {(t.student, t.lab): t for t in rows}


def baseline_us(rows, lab) -> float | None:
    timing = next((t for t in rows if t.student == BASELINE and t.lab == lab and t.ok), None)
    return timing.median_us if timing else None


def bandwidth_gbps(timing: Timing) -> float:
    """The CSV's GB/s, or bytes read over the median time when the column was left out."""
    if timing.gbps is not None:
        return timing.gbps
    return timing.n * ELEMENT_BYTES[timing.type] / (timing.median_us * 1e3)


def ladder_speedups(times) -> list[tuple[float, float] | None]:
    """(step, cumulative) speedup per lab; a lab without a time gets None and is skipped as 'previous'."""
    speedups, first, previous = [], None, None
    for time in times:
        if time is None:
            speedups.append(None)
            continue
        first = first or time
        speedups.append((previous / time if previous else 1.0, first / time))
        previous = time
    return speedups


# ---------------------------------------------------------------------------
# Formatting


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


def file_stem(text) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "unnamed"


# ---------------------------------------------------------------------------
# Drawing helpers shared by the figures


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


def _note_top(ax, x, text, color=FAILED_COLOR):
    ax.text(x, 0.94, text, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=7.5, color=color)


def _legend_outside(ax):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _verdict(cell):
    return "missing" if cell is None else cell.status


def _unsuccessful_labs(labs, cells, student):
    """(x, verdict) for each lab where this student has no usable time, 'missing' when there is no row."""
    return [(x, _verdict(cells.get((student, lab)))) for x, lab in enumerate(labs)
            if _ok_time(cells.get((student, lab))) is None]


def _require_student(rows, student):
    if student not in student_names(rows):
        raise TimingsError(f"student '{student}' is not in the file (students: {', '.join(student_names(rows))})")


# ---------------------------------------------------------------------------
# Figure: every student's time per lab


def plot_by_lab(rows, n=DEFAULT_N, dtype=DEFAULT_TYPE, anonymize=False, info=None) -> Figure:
    """Each student's median per lab as jittered points, the reference as a bar-width line, CUB and roof lines."""
    chosen = select(rows, n, dtype)
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
    failed_xs = []
    for x, lab in enumerate(labs):
        failed = [i for i, s in enumerate(names) if (s, lab) in cells and not cells[(s, lab)].ok]
        missing = [s for s in names if (s, lab) not in cells]
        failed_xs += [x + _student_offset(i, len(names)) for i in failed]
        lines = [f"{len(failed)} failed"] * bool(failed) + [f"{len(missing)} missing"] * bool(missing)
        reference = cells.get((REFERENCE, lab))
        if reference is not None and not reference.ok:
            lines.append(f"reference {reference.status}")
        if lines:
            _note_top(ax, x, "\n".join(lines))
    _mark_top(ax, failed_xs, "failed run (status ≠ ok)")


# ---------------------------------------------------------------------------
# Figure: the reference ladder with step and cumulative speedups


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


def _ok_time(cell):
    return cell.median_us if cell is not None and cell.ok else None


def _baseline_values(rows):
    return [v for v in (baseline_us(rows, lab) for lab in BASELINE_LABS) if v]


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
    _mark_top(ax, [x for x, _ in failed], f"{shown}: failed or missing")
    for x, verdict in failed:
        _note_top(ax, x, verdict, FAILED_COLOR if verdict != "missing" else MISSING_COLOR)


# ---------------------------------------------------------------------------
# Figure: one student against the references


def plot_student(rows, student, n=DEFAULT_N, dtype=DEFAULT_TYPE, anonymize=False, info=None) -> Figure:
    """One student's median per lab next to the reference's (grouped bars); failed and missing labs named."""
    _require_student(rows, student)
    chosen = select(rows, n, dtype)
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
    _mark_top(ax, [x + 0.2 for x, _ in failed], f"{shown}: failed or missing")
    for x, verdict in failed:
        color = MISSING_COLOR if verdict == "missing" else FAILED_COLOR
        # Written where the missing bar would stand, so the gap explains itself.
        ax.text(x + 0.2, 0.03, verdict, transform=ax.get_xaxis_transform(), rotation=90, ha="center",
                va="bottom", fontsize=8, color=color, fontweight="bold", bbox=TEXT_BACKDROP)


# ---------------------------------------------------------------------------
# Figure: time (or bandwidth) against n


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


# ---------------------------------------------------------------------------
# Saving and the command line


def save_figure(figure, out_dir, stem, formats=("png", "svg")) -> list[str]:
    """Write the figure once per format; text stays text in SVG and dates are left out so reruns diff cleanly."""
    paths = []
    for fmt in formats:
        path = os.path.join(out_dir, f"{stem}.{fmt}")
        metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt, {})
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "reduction-labs"}):
            figure.savefig(path, format=fmt, dpi=150, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    return paths


def _comma_list(allowed=None):
    def parse(text):
        items = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in items if allowed and item not in allowed]
        if not items or unknown:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {', '.join(allowed or ['names'])}")
        return items
    return parse


def _element_count(text):
    """Accept 16777216, 2^24 or 1<<24: the course writes sizes all three ways."""
    match = re.fullmatch(r"\s*(?:(\d+)|2\s*\^\s*(\d+)|1\s*<<\s*(\d+))\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected an element count such as 16777216 or 2^24, got '{text}'")
    plain, power, shift = match.groups()
    return int(plain) if plain else 1 << int(power or shift)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Plot reduction-labs timings (see plots/README.md).")
    parser.add_argument("timings", help="timings.csv from a grading run or a student benchmark")
    parser.add_argument("--out", required=True, help="directory for the figures (created if missing)")
    parser.add_argument("--json", help="run metadata sidecar (default: the CSV's stem + .json, if present)")
    parser.add_argument("--figures", type=_comma_list(FIGURES), help=f"subset of {','.join(FIGURES)} (default: all)")
    parser.add_argument("--n", type=_element_count, default=DEFAULT_N, help="size for by-lab/ladder/per-student")
    parser.add_argument("--type", dest="dtype", choices=sorted(ELEMENT_BYTES), default=DEFAULT_TYPE)
    parser.add_argument("--anonymize", action="store_true", help="show students as 'student 1..k' (sorted order)")
    parser.add_argument("--student", help="overlay this student's times on the ladder")
    parser.add_argument("--labs", type=_comma_list(), help="labs for the size sweep (default: all references)")
    parser.add_argument("--metric", choices=("time", "gbps"), default="time", help="y axis of the size sweep")
    parser.add_argument("--formats", type=_comma_list(FORMATS), default=["png", "svg"])
    return parser


def _figures_for(name, rows, args, info):
    """(file stem, figure) pairs for one --figures entry; figures are drawn lazily, one at a time."""
    common = {"n": args.n, "dtype": args.dtype, "info": info}
    if name == "by-lab":
        yield "by_lab", plot_by_lab(rows, anonymize=args.anonymize, **common)
    elif name == "ladder":
        yield "ladder", plot_ladder(rows, student=args.student, anonymize=args.anonymize, **common)
    elif name == "per-student":
        for index, student in enumerate(student_names(rows), 1):
            stem = f"student_{index}" if args.anonymize else f"student_{file_stem(student)}"
            yield stem, plot_student(rows, student, anonymize=args.anonymize, **common)
    elif name == "sweep":
        yield "sweep", plot_sweep(rows, dtype=args.dtype, labs=args.labs, metric=args.metric, info=info)


def _run(args) -> list[str]:
    rows = load_timings(args.timings)
    sidecar_path = args.json or find_sidecar(args.timings)
    info = run_info(rows, load_sidecar(sidecar_path) if sidecar_path else None)
    if args.student is not None and args.student not in student_names(rows):
        raise TimingsError(f"student '{args.student}' is not in {args.timings}")
    os.makedirs(args.out, exist_ok=True)
    written = []
    for name in args.figures or FIGURES:
        try:
            for stem, figure in _figures_for(name, rows, args, info):
                written += save_figure(figure, args.out, stem, args.formats)
        except NoDataError as exc:
            if args.figures:  # asked for by name: not drawing it is an error
                raise
            print(f"warning: skipping {name}: {exc}", file=sys.stderr)
    if not written:
        raise TimingsError(f"{args.timings}: nothing to plot")
    return written


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        written = _run(args)
    except (TimingsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
