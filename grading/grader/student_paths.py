"""Where a student's files go in OUT. Every per-student file and folder is named by
student_file_name(), defined once in plots/plotting/file_names.py (the figures are named by it
too; it imports nothing) and imported from there, as timings_schema.py does: the plots never
import the grader, so the one definition lives on their side. Plain names (aaron, s007) are
their own file names; any other byte is %XX, so no two students share a file."""

from __future__ import annotations

import sys
from pathlib import Path

_PLOTS = Path(__file__).resolve().parents[2] / "plots"
if str(_PLOTS) not in sys.path:
    sys.path.insert(0, str(_PLOTS))

from plotting.file_names import student_file_name  # noqa: E402,F401


def record_path(out: Path, student: str) -> Path:
    """OUT/students/<name>.json: the student's signed record."""
    return Path(out) / "students" / f"{student_file_name(student)}.json"


def gradescope_folder(out: Path, student: str) -> Path:
    """OUT/gradescope/<name>/: the student's results.json."""
    return Path(out) / "gradescope" / student_file_name(student)


def work_folder(out: Path, student: str) -> Path:
    """OUT/work/<name>/: spliced sources and modules (never the run's .run/ or .claims/: no name starts with '.')."""
    return Path(out) / "work" / student_file_name(student)


def claim_path(out: Path, student: str) -> Path:
    """OUT/work/.claims/<name>.lock: held while a grader grades the student."""
    return Path(out) / "work" / ".claims" / f"{student_file_name(student)}.lock"
