"""The class folder: which of its entries are students, which are refused and which ignored, and why.

A student is a folder (never a symbolic link: a link to a classmate's folder must not be graded as
this student's) whose name is a student name (student_names.py: any valid UTF-8 name but for a
few real hazards). Every other entry is listed with its reason, never dropped in silence:

- refused: a link, or a folder whose name cannot be a student's. It may be a student's hand-in, so
  a class grading that refused any ends with its own exit status (ExitStatus.REFUSED, contract.json);
- ignored: a hidden entry (its name starts with '.': .git, .DS_Store) or a file (the class folder
  holds one folder per student). Listed, but no reason for that status.

The console says so as a grading starts and again at its end, and OUT/refused-folders.json
(written by the grader, read by the class report) lists them all, names as shown() writes them.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from ..manifest import GraderError
from ..outputs.atomic_files import write_json
from ..outputs.events import Refused
from ..outputs.student_names import RESERVED_NAMES, name_problem, shown  # noqa: F401  (RESERVED_NAMES: one definition)
from ..outputs.student_paths import REFUSED_FILE

LINK = "a symbolic link, not a student's own folder"
HIDDEN = "hidden (its name starts with '.'): not a student's; ignored"
NOT_A_FOLDER = "not a folder (a student hands in a folder); ignored"


@dataclass(frozen=True)
class NotGraded:
    """An entry of the class folder that is no student: its name (as shown()), why, and whether it
    was refused (it may be a student's: the exit status says so) or only ignored."""
    name: str
    why: str
    refused: bool


@dataclass
class ClassFolder:
    path: Path
    students: list[tuple[str, Path]]   # (name, folder), sorted by name
    not_graded: list[NotGraded]

    @property
    def refused(self) -> list[NotGraded]:
        return [entry for entry in self.not_graded if entry.refused]


def folder_problem(entry: Path) -> NotGraded | None:
    """Why the entry `entry` of a class folder is not a student, or None for a student."""
    name = shown(entry.name)
    if entry.name.startswith("."):
        return NotGraded(name, HIDDEN, False)
    if entry.is_symlink():
        return NotGraded(name, LINK, True)
    if not entry.is_dir():
        return NotGraded(name, NOT_A_FOLDER, False)
    why = name_problem(entry.name)
    return NotGraded(name, f"its name cannot be a student's: {why}", True) if why else None


def scan(submissions: Path) -> ClassFolder:
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise GraderError(f"{submissions}: not a folder")
    found = ClassFolder(submissions, [], [])
    # os.listdir() of a str path: names that are not UTF-8 come as lone surrogates, which name_problem() sees
    for name in sorted(os.listdir(submissions)):
        problem = folder_problem(submissions / name)
        if problem is None:
            found.students.append((name, submissions / name))
        else:
            found.not_graded.append(problem)
    return found


def write_refused(out: Path, folder: ClassFolder) -> None:
    write_json(Path(out) / REFUSED_FILE, [asdict(entry) for entry in folder.not_graded])


def not_graded_lines(folder: ClassFolder) -> list[str]:
    """The console's list: one line per refused entry, the ignored ones together on one line."""
    lines = [f'  refused: "{entry.name}": {entry.why}' for entry in folder.refused]
    ignored = [f'"{entry.name}"' for entry in folder.not_graded if not entry.refused]
    if ignored:
        lines.append(f"  ignored ({len(ignored)}, hidden or not a folder): " + ", ".join(ignored))
    return lines


def refused_events(folder: ClassFolder) -> list[Refused]:
    """A grading's first events: one per refused entry (its console line: a warning)."""
    return [Refused(where=shown(str(folder.path)), name=entry.name, why=entry.why) for entry in folder.refused]


def warnings(folder: ClassFolder) -> list[str]:
    """What the console says as a grading starts: a warning per refused entry."""
    return [event.text() for event in refused_events(folder)]


def selected(folder: ClassFolder, wanted: list[str] | None) -> list[tuple[str, Path]]:
    """The students that --student asked for (each value a name, or several separated by commas)."""
    if not wanted:
        return folder.students
    known = {name for name, _ in folder.students}
    names: set[str] = set()
    for item in wanted:   # a whole value that is a student's name is that name: "Doe, Jane" is one student
        names |= {item} if item in known else {part.strip() for part in item.split(",") if part.strip()}
    refused = {entry.name: entry.why for entry in folder.not_graded}
    unknown = [shown(name) for name in sorted(names - known)]
    if unknown:
        raise GraderError("--student: " + "; ".join(f'"{name}" is refused: {refused[name]}' if name in refused
                                                    else f'no submission folder "{name}"' for name in unknown)
                          + f" in {shown(str(folder.path))}")
    return [student for student in folder.students if student[0] in names]


def find_students(submissions: Path, wanted: list[str] | None, log) -> list[tuple[str, Path]]:
    """The students of the class folder (those --student asked for), after a warning for each entry
    that is refused."""
    folder = scan(submissions)
    for line in warnings(folder):
        log(line)
    students = selected(folder, wanted)
    if not students:
        raise GraderError(f"{shown(str(submissions))}: no student folders")
    return students
