"""The class folder: which of its folders are students, and which are refused and why.

A student's name is its folder's name, and it ends up in file names, a spreadsheet, JUnit, a web
page and the console. So only plain names are students ([A-Za-z0-9] first, then [A-Za-z0-9_.@+-],
64 at most: never a formula, never markup, never a terminal escape); a symbolic link is never a
student's own folder. A refused folder gets no grade, no row and no files of its own: the console
says so as it starts, and OUT/refused-folders.json (written by the grader, read by the class
report) lists it with the reason, its name as data.
"""

from __future__ import annotations

import re
from pathlib import Path

from .manifest import GraderError
from .reports import write_json

RESERVED_NAMES = ("reference", "baseline", "A/A", "roof", "cub")   # rows of timings.csv that are not students
STUDENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")  # no leading =, +, -, @: never a formula
REFUSED_FILE = "refused-folders.json"
LINK = "a symbolic link, not a student's own folder"
ODD_NAME = "cannot be a student name (reserved, odd characters or a leading =, +, -, @)"


def folder_problem(entry: Path) -> str | None:
    """Why the folder `entry` of a class folder is not a student ("" for what is no folder at all:
    a file, a dot-folder), or None for a student."""
    if entry.name.startswith("."):
        return ""
    if entry.is_symlink():   # a link to a classmate's folder must not be graded as this student's
        return LINK
    if not entry.is_dir():
        return ""
    if entry.name in RESERVED_NAMES or not STUDENT_NAME.fullmatch(entry.name):
        return ODD_NAME
    return None


def refused_folders(submissions: Path) -> list[dict[str, str]]:
    """Every folder of the class folder that looks like a student's and is refused: name and why."""
    found = []
    for entry in sorted(Path(submissions).iterdir()):
        why = folder_problem(entry)
        if why:
            found.append({"name": entry.name, "why": why})
    return found


def write_refused(out: Path, submissions: Path) -> None:
    write_json(Path(out) / REFUSED_FILE, refused_folders(submissions))


def find_students(submissions: Path, wanted: list[str] | None, log) -> list[tuple[str, Path]]:
    if not submissions.is_dir():
        raise GraderError(f"{submissions}: not a folder")
    students = []
    for entry in sorted(submissions.iterdir()):
        why = folder_problem(entry)
        if why:
            log(f"warning: {submissions}/{entry.name!r} {'is ' if why == LINK else ''}{why}; skipped")
        elif why is None:
            students.append((entry.name, entry))
    if wanted:
        names = {name.strip() for item in wanted for name in item.split(",") if name.strip()}
        unknown = names - {name for name, _ in students}
        if unknown:
            raise GraderError(f"--student: no submission folder for {', '.join(sorted(unknown))} in {submissions}")
        students = [s for s in students if s[0] in names]
    if not students:
        raise GraderError(f"{submissions}: no student folders")
    return students
