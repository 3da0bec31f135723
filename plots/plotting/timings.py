"""The timings schema and its loading: one row of timings.csv (the grader's and the benchmark's
long format) as a typed Timing, the run's GPU and date, and the selections every figure makes."""

from __future__ import annotations

import csv
import json
import math
import os
import platform
import re
from collections import Counter
from dataclasses import dataclass

from class_files.csv_cells import csv_text
from class_files.timings_columns import BASELINE, NUMERIC_COLUMNS, REFERENCE, REQUIRED_COLUMNS
from class_files.timings_columns import COLUMNS  # noqa: F401  (the plots' tests read it from here)

CUB = "cub"
ROOF = "roof"
OK = "ok"
NOT_RUN = "NOT_RUN"   # the grader's verdict for a GPU lab on a machine without a GPU
PASSED = "PASSED"     # a lab that passed but has no time (lab 01 in a run without a GPU)
BASELINE_LABS = (CUB, ROOF)
ELEMENT_BYTES = {"int": 4, "float": 4}
DEFAULT_N = 1 << 24
DEFAULT_TYPE = "float"


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

    @property
    def not_run(self) -> bool:
        return self.status == NOT_RUN

    @property
    def failed(self) -> bool:
        """Neither a time, nor a lab that was not run or passed untimed."""
        return self.status not in (OK, NOT_RUN, PASSED)


@dataclass(frozen=True)
class RunInfo:
    """Where and when the timings were taken, for titles."""

    gpu: str = "unknown GPU"
    date: str = "unknown date"




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
    student = csv_text(record.text("student", required=True))   # the grader's "'=..." is the name "=..."
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
    """GPU and date from the CSV columns, falling back to the sidecar. With no GPU named anywhere:
    when nothing was measured (a run without a GPU), this machine's CPU and "no GPU"; otherwise
    "unknown GPU", since the times came from a GPU the file does not name."""
    sidecar = sidecar or RunInfo(gpu="", date="")
    gpus = [name for name, _ in Counter(t.gpu for t in rows if t.gpu).most_common()]
    dates = sorted({t.date for t in rows if t.date})
    gpu = " / ".join(gpus) or sidecar.gpu
    if not gpu:
        gpu = f"no GPU (CPU: {cpu_model()})" if not any(t.ok for t in rows) else RunInfo.gpu
    date = (dates[0] if len(dates) == 1 else f"{dates[0]}..{dates[-1]}") if dates else (sidecar.date or RunInfo.date)
    return RunInfo(gpu=gpu, date=date)


def add_grader_verdicts(rows, csv_path) -> list[Timing]:
    """The grader writes no timings row for a lab that passed untimed (or is MISSING); its
    students/*.json beside timings.csv say which. A PASSED row (no time) is added for each
    passed lab without a row, so a figure shows it as passed, not as missing."""
    folder = os.path.join(os.path.dirname(os.path.abspath(csv_path)), "students")
    if not os.path.isdir(folder):
        return rows
    present = {(t.student, t.lab) for t in rows}
    shapes = sorted({(t.type, t.n) for t in rows})
    added = []
    for name in sorted(os.listdir(folder)):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                record = json.load(handle) if name.endswith(".json") else {}
        except (OSError, json.JSONDecodeError):
            continue  # not a grader record: its timings are what the CSV says
        labs = record.get("labs") if isinstance(record, dict) else None
        for lab, entry in (labs or {}).items():
            key = (str(record.get("student", "")), lab)
            if key[0] and key not in present and isinstance(entry, dict) and entry.get("verdict") == PASSED:
                added += [Timing(row=0, student=key[0], lab=lab, type=kind, n=n, status=PASSED) for kind, n in shapes]
    return rows + added


def cpu_model() -> str:
    """This machine's CPU as /proc/cpuinfo names it (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def lab_order(rows) -> list[str]:
    """Lab folder names sort into course order ("01_host_sum" < ... < "10_two_step")."""
    return sorted({t.lab for t in rows if t.student != BASELINE})


def student_names(rows) -> list[str]:
    return sorted({t.student for t in rows if t.student not in (REFERENCE, BASELINE)})


def display_names(rows, anonymize=False) -> dict[str, str]:
    """Real name -> shown name; numbering comes from the whole file so it is the same in every figure.
    Any name is shown as it is spelt: a '$' escaped (two of them would make matplotlib read the text
    between as math, and stop the figure at a formula it cannot parse), and a leading '_' after a
    space (matplotlib leaves a legend label that starts with '_' out)."""
    names = student_names(rows)
    if anonymize:
        return {name: f"student {index}" for index, name in enumerate(names, 1)}
    return {name: (" " if name.startswith("_") else "") + name.replace("$", r"\$") for name in names}


def require_measured(rows, n, dtype) -> None:
    """A time figure draws measured data only: none at all is NoDataError, never empty axes."""
    if not any(t.ok for t in rows):
        not_run = sorted({t.lab for t in rows if t.not_run})
        why = f" ({len(not_run)} labs not run: no GPU)" if not_run else ""
        raise NoDataError(f"no measured times at n={n}, type={dtype}{why}; see the status figure")


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

