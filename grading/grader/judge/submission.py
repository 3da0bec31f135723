"""What a student handed in: the lab files named in the manifest, their STUDENT CODE regions
spliced into the official skeletons, and everything else listed as ignored.

A submission is a folder per student that mirrors labs/: <student>/labs/NN_name/<file>, or
<student>/NN_name/<file>. Only the manifest's files count. Of each, only the text between the
STUDENT CODE markers is used: it is spliced into the official skeleton, so edits outside the
region (the launch constants, the error depth, the export macro, the includes) cannot change what
is graded, and they are reported.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..manifest import Lab

BEGIN_MARKER = "// ==== BEGIN STUDENT CODE ===="
END_MARKER = "// ==== END STUDENT CODE ===="
_BEGIN = re.compile(r"^[ \t]*//[ \t]*=+[ \t]*BEGIN STUDENT CODE[ \t]*=+[ \t]*$", re.MULTILINE)
_END = re.compile(r"^[ \t]*//[ \t]*=+[ \t]*END STUDENT CODE[ \t]*=+[ \t]*$", re.MULTILINE)
# Folders listed once instead of file by file: tool and build litter.
COLLAPSED_DIRS = {".git", ".svn", ".hg", "__pycache__", ".vscode", ".idea", ".cache", "node_modules", "CMakeFiles"}
MAX_IGNORED = 200
MAX_WALKED = 5000              # entries looked at when listing what is ignored (a folder of millions stops here)
MAX_DEPTH = 20
MAX_LAB_FILE_BYTES = 1 << 20  # a lab file is a few KiB; a bigger one is not read into the grader
# The lab note's first words when the submission changed the file outside its region (lab_flags.py
# finds it there in records graded before flags were recorded).
OUTSIDE_REGION_NOTE = "changes outside the STUDENT CODE region were ignored"


class RegionError(ValueError):
    """The markers are missing, repeated or out of order."""


@dataclass
class Regions:
    before: str   # up to and including the BEGIN marker line
    region: str   # between the marker lines
    after: str    # from the END marker line on


def read_text(path: Path) -> str:
    """File text with Unix line endings (a CRLF checkout must not count as a change)."""
    return path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")


def split_regions(text: str, what: str = "the file") -> Regions:
    begins = list(_BEGIN.finditer(text))
    ends = list(_END.finditer(text))
    problem = None
    if not begins or not ends:
        missing = " and ".join(m for m, found in ((BEGIN_MARKER, begins), (END_MARKER, ends)) if not found)
        problem = f"{what} has no '{missing}' line"
    elif len(begins) > 1 or len(ends) > 1:
        problem = f"{what} has more than one BEGIN/END STUDENT CODE marker"
    elif ends[0].start() < begins[0].end():
        problem = f"{what} has its END STUDENT CODE marker before its BEGIN marker"
    if problem:
        raise RegionError(problem + ": keep exactly one marker pair, as in the skeleton; the grader compiles "
                                    "only the code between them")
    begin_end = text.index("\n", begins[0].end()) + 1 if "\n" in text[begins[0].end():] else len(text)
    return Regions(text[:begin_end], text[begin_end:ends[0].start()], text[ends[0].start():])


def splice(skeleton_text: str, submitted_text: str, what: str) -> tuple[str, list[str]]:
    """The skeleton with the submission's student region; and notes on changes made outside it."""
    skeleton = split_regions(skeleton_text, "the official skeleton")
    submitted = split_regions(submitted_text, what)
    notes = []
    outside_skeleton = skeleton.before + skeleton.after
    outside_submitted = submitted.before + submitted.after
    if _normalized(outside_skeleton) != _normalized(outside_submitted):
        diff = list(difflib.unified_diff(outside_skeleton.splitlines(), outside_submitted.splitlines(),
                                         "skeleton (outside the region)", "submitted (outside the region)",
                                         n=0, lineterm=""))
        shown = diff[:24] + ([f"... {len(diff) - 24} more diff lines"] if len(diff) > 24 else [])
        notes.append(f"{OUTSIDE_REGION_NOTE} (the official skeleton's text was used there):\n" + "\n".join(shown))
    region = submitted.region
    if region and not region.endswith("\n"):
        region += "\n"
    return skeleton.before + region + skeleton.after, notes


def _normalized(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


@dataclass
class Submission:
    student: str
    root: Path
    files: dict[str, Path] = field(default_factory=dict)      # lab folder -> submitted file
    ignored: list[str] = field(default_factory=list)           # paths relative to root
    near_misses: dict[str, list[str]] = field(default_factory=dict)  # lab folder -> other files in its folder
    too_large: dict[str, int] = field(default_factory=dict)          # lab folder -> size of its oversized file


def collect(student: str, root: Path, labs: list[Lab]) -> Submission:
    """The manifest's lab files in `root` (labs/NN_name/<file> or NN_name/<file>); all else ignored."""
    submission = Submission(student, root)
    taken: set[Path] = set()
    for lab in labs:
        for candidate in (root / "labs" / lab.folder / lab.file, root / lab.folder / lab.file):
            # a link could make the grader read (and echo in a compiler message) a file outside the submission
            if candidate.is_file() and not candidate.is_symlink() and candidate.resolve().is_relative_to(root.resolve()):
                if candidate.stat().st_size > MAX_LAB_FILE_BYTES:
                    submission.too_large[lab.folder] = candidate.stat().st_size
                else:
                    submission.files[lab.folder] = candidate
                taken.add(candidate)
                break
        else:
            others = sorted({str(p.relative_to(root)) for folder in (root / "labs" / lab.folder, root / lab.folder)
                             if folder.is_dir() for p in folder.iterdir() if p.is_file() and not p.is_symlink()})
            if others:
                submission.near_misses[lab.folder] = others
    ignored = []
    walked = [0]
    _walk_ignored(root, root, taken, ignored, walked, 0)
    if walked[0] >= MAX_WALKED:
        ignored.append(f"... the listing stopped after {MAX_WALKED} entries")
    if len(ignored) > MAX_IGNORED:
        ignored = ignored[:MAX_IGNORED] + [f"... and {len(ignored) - MAX_IGNORED} more"]
    submission.ignored = ignored
    return submission


def _walk_ignored(root: Path, folder: Path, taken: set[Path], ignored: list[str], walked: list[int],
                  depth: int) -> None:
    for entry in sorted(folder.iterdir())[:MAX_WALKED]:
        walked[0] += 1
        if walked[0] > MAX_WALKED:
            return
        relative = entry.relative_to(root).as_posix()
        if entry.is_symlink():
            ignored.append(relative + " (symbolic link)")
        elif entry.is_dir():
            if entry.name in COLLAPSED_DIRS or entry.name.startswith("build") or depth >= MAX_DEPTH:
                ignored.append(relative + "/")
            else:
                _walk_ignored(root, entry, taken, ignored, walked, depth + 1)
        elif entry not in taken:
            ignored.append(relative)
