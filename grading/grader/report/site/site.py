"""OUT/report/: the class report an instructor opens in a browser, written from the signed records.

  OUT/report/index.html                   the class page (class_page.py)
  OUT/report/students/<file name>.html    the instructor's page of each graded student (student_page.py)
  OUT/report/handouts/<file name>.html    the page the instructor may send to that student (handout.py)
  OUT/report/files/, plots/, records/, gradescope/   what the pages link, copied (copies.py)

Static, whole pages that open from file://, linking nothing outside the folder. Rewritten with the
other class outputs after every student (a file whose text did not change is left alone) and once
more when the grading ends, after the figures are drawn: a figure older than the timings is not
copied.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...manifest import Lab
from ...outputs.atomic_files import write_atomic
from ...outputs.records import StudentRecord
from ...outputs.student_paths import REFUSED_FILE
from ..reports import bonus_folders, graded_labs
from .class_page import class_page
from .copies import copy_linked_files
from .handout import handout
from .paths import HANDOUTS, STUDENTS, handout_path, student_page_path
from .student_page import student_page

REPORT = "report"
DRAWN_AT_THE_END = "The figures are drawn when the grading ends (by a Python with matplotlib)."


def _refused(out: Path) -> list[tuple[str, str]]:
    """The class folder's refused folders (class_folder.py wrote them): name and why. Entries it only
    ignored (hidden ones, plain files: `refused` false) need no attention."""
    try:
        data = json.loads((out / REFUSED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [(str(item.get("name", "")), str(item.get("why", ""))) for item in data
            if isinstance(item, dict) and item.get("refused", True)] if isinstance(data, list) else []


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
    copies = copy_linked_files(out, site, records, not_before, only)
    note = plots_note or ("" if any(c.startswith("plots/") for c in copies) else DRAWN_AT_THE_END)
    index = site / "index.html"
    _write_if_changed(index, class_page(records, graded_labs(records, labs), names, bonus_folders(records),
                                        _refused(out), copies, note))
    kept = set()
    for record in records:
        kept |= {student_page_path(record.student), handout_path(record.student)}
        if only is None or record.student in only:
            _write_if_changed(site / student_page_path(record.student), student_page(record, copies))
            _write_if_changed(site / handout_path(record.student), handout(record))
    if only is None:
        for folder in (STUDENTS, HANDOUTS):   # a student no longer in the class folder
            for stale in (site / folder).glob("*.html"):
                if f"{folder}/{stale.name}" not in kept:
                    stale.unlink()
    return index
