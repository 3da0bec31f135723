"""Everything the report links, copied into OUT/report/ so the folder works when shared alone:

  files/gradebook.csv, timings.csv, timings.json, junit.xml   the class files (reports.py)
  plots/<stem>.svg, .png                                      the figures of plots/reduction_plots.py
  records/<file name>.json                                    each student's signed record
  gradescope/<file name>/results.json                         each student's Gradescope results

Only what this grading wrote is copied: a record or results file by the student's own path (never a
listing of OUT/students, where a phantom could lie), a figure only when it is a plain file drawn
after the timings it shows, and an SVG cleaned to drawing only (figures.py). A copy whose bytes did
not change is left alone; copies of a student no longer in the class are removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ...outputs.atomic_files import write_atomic_bytes
from ...outputs.records import StudentRecord
from ...outputs.student_paths import gradescope_folder, record_path
from .figures import MAX_BYTES, load_figure
from .paths import gradescope_copy_path, record_copy_path

CLASS_FILES = ("gradebook.csv", "timings.csv", "timings.json", "junit.xml")
FILES = "files"
PLOTS = "plots"


def _copy(source: Path, target: Path, data: bytes | None = None) -> bool:
    """`source`'s bytes (or `data`) at `target`, unless they are there already; False when there is no source."""
    try:
        if data is None:
            if source.is_symlink() or not source.is_file() or source.stat().st_size > MAX_BYTES:
                return False
            data = source.read_bytes()
        if target.is_file() and target.read_bytes() == data:
            return True
    except OSError:
        return False
    write_atomic_bytes(target, data)   # a temporary name of its own: --gpus workers copy the same files at once
    return True


def _plots(out: Path, site: Path, not_before: float) -> set[str]:
    """The figures drawn after the timings: an SVG cleaned to drawing (figures.load_figure), a PNG as it is."""
    copied = set()
    folder = out / "plots"
    for source in sorted(folder.iterdir()) if folder.is_dir() else []:
        if source.suffix == ".svg":
            figure = load_figure(folder, source.stem, not_before)
            done = bool(figure.svg) and _copy(source, site / PLOTS / source.name, figure.svg.encode("utf-8"))
        elif source.suffix == ".png":
            try:
                fresh = source.lstat().st_mtime >= not_before
            except OSError:
                fresh = False
            done = fresh and _copy(source, site / PLOTS / source.name)
        else:
            continue
        if done:
            copied.add(f"{PLOTS}/{source.name}")
    for stale in (site / PLOTS).glob("*") if (site / PLOTS).is_dir() else []:
        if f"{PLOTS}/{stale.name}" not in copied:
            stale.unlink()
    return copied


def _students(out: Path, site: Path, records: list[StudentRecord], only: set[str] | None) -> set[str]:
    copied = set()
    for record in records:
        for source, target in ((record_path(out, record.student), record_copy_path(record.student)),
                               (gradescope_folder(out, record.student) / "results.json",
                                gradescope_copy_path(record.student))):
            if only is not None and record.student not in only:
                if (site / target).is_file():
                    copied.add(target)
            elif _copy(source, site / target):
                copied.add(target)
    if only is None:
        for stale in list((site / "records").glob("*.json")) + list((site / "gradescope").glob("*/results.json")):
            if stale.relative_to(site).as_posix() not in copied:
                stale.unlink()
                if stale.parent.name != "records" and not any(stale.parent.iterdir()):
                    shutil.rmtree(stale.parent, ignore_errors=True)
    return copied


def copy_linked_files(out: Path, site: Path, records: list[StudentRecord], not_before: float,
                      only: set[str] | None = None) -> set[str]:
    """Copies what the report links into `site`; returns their paths relative to it."""
    copied = {f"{FILES}/{name}" for name in CLASS_FILES if _copy(out / name, site / FILES / name)}
    return copied | _plots(out, site, not_before) | _students(out, site, records, only)

