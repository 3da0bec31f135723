"""OUT/report/: the class report an instructor opens in a browser, written from the signed records.

  OUT/report/index.html                  the class page (class_page.py)
  OUT/report/students/<file name>.html   one page per graded student (student_page.py)

Static, whole pages that open from file://. Rewritten with the other class outputs after every
student (a file whose text did not change is left alone) and once more when the grading ends, after
the figures are drawn: a page never shows a figure older than the timings.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..class_folder import REFUSED_FILE
from ..manifest import Lab
from ..records import StudentRecord
from ..reports import bonus_folders, graded_labs, write_atomic
from ..student_paths import student_file_name
from .class_page import class_page
from .figures import CLASS_FIGURES, load_figure
from .student_page import student_page, student_page_path

REPORT = "report"
DRAWN_AT_THE_END = "The figures are drawn when the grading ends (by a Python with matplotlib)."


def _refused(out: Path) -> list[tuple[str, str]]:
    """The class folder's refused folders (class_folder.py wrote them): name and why."""
    try:
        data = json.loads((out / REFUSED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [(str(item.get("name", "")), str(item.get("why", ""))) for item in data if isinstance(item, dict)] \
        if isinstance(data, list) else []


def _write_if_changed(path: Path, content: str) -> bool:
    try:
        if path.read_text(encoding="utf-8") == content:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, content)
    return True


def write_site(out: Path, labs: list[Lab], names: list[str], records: list[StudentRecord],
               plots_note: str = "", only: set[str] | None = None) -> Path:
    """Writes the class report of `records` (the signed, complete records of the class folder's
    `names`, in class order) and returns its class page. `only`: of the student pages, write only
    these students' (the one just graded), and remove none."""
    out = Path(out)
    site = out / REPORT
    timings = out / "timings.csv"
    not_before = timings.stat().st_mtime if timings.is_file() else 0.0
    plots = out / "plots"
    figures = {stem: load_figure(plots, stem, not_before) for stem, _ in CLASS_FIGURES}
    note = plots_note or ("" if any(f.svg for f in figures.values()) else DRAWN_AT_THE_END)
    index = site / "index.html"
    _write_if_changed(index, class_page(records, graded_labs(records, labs), names, bonus_folders(records), figures,
                                        note, _refused(out)))
    kept = set()
    for record in records:
        path = site / student_page_path(record.student)
        kept.add(path.name)
        if only is None or record.student in only:
            figure = load_figure(plots, f"student_{student_file_name(record.student)}", not_before)
            _write_if_changed(path, student_page(record, figure))
    if only is None:
        for stale in (site / "students").glob("*.html"):   # a student no longer in the class folder
            if stale.name not in kept:
                stale.unlink()
    return index
