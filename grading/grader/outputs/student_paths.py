"""Where a student's files go in OUT. Every per-student file and folder is named by
student_file_name() (class_files/names.py, which the figures are named by too). Plain names (aaron,
s007) are their own file names; any other byte is %XX, so no two students share a file. And the one
class-level file about students that are not graded: the class folder's refused and ignored entries."""

from __future__ import annotations

from pathlib import Path

from class_files.names import student_file_name

REFUSED_FILE = "refused-folders.json"   # OUT/<it>: written by run/class_folder.py, shown by the class report


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
