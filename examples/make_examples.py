#!/usr/bin/env python3
"""Writes the example class, examples/submissions/, from the current skeletons and solutions.

Every student file is the official skeleton with a STUDENT CODE region spliced in: the reference
solution's region for the labs a student got right, or a hand-written region from
examples/regions/<student>/<lab folder>.<ext> for the labs with a planted bug. So the files follow
the skeletons and solutions as they change: rerun this after editing a lab, and commit its output.

It also writes examples/expected_verdicts.json (read by the grader's tests) and the verdict table
in examples/README.md, between the expected-verdicts markers.

    python3 examples/make_examples.py            # from anywhere
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent
REPO = EXAMPLES.parent
sys.path.insert(0, str(REPO / "grading"))

from grader.submission import split_regions  # noqa: E402

SUBMISSIONS = EXAMPLES / "submissions"
REGIONS = EXAMPLES / "regions"
README = EXAMPLES / "README.md"
TABLE_BEGIN = "<!-- expected-verdicts:begin (written by make_examples.py) -->"
TABLE_END = "<!-- expected-verdicts:end -->"


@dataclass
class Planted:
    """A lab with a planted bug, and the verdict it gets.

    Its region is the reference solution's region of `from_lab` (default: the lab itself) with
    `edits` applied, each a (regex, replacement) that must match at least once; or, when
    `hand_written` is set, examples/regions/<student>/<lab folder>.<ext> as it is. Edits of the
    solution keep a bug in step with the solution's design; a hand-written region is for a bug
    that is the student's own design."""
    verdict: str
    why: str
    from_lab: str | None = None
    edits: tuple[tuple[str, str], ...] = ()
    hand_written: bool = False
    hazards: tuple[str, ...] = ()   # sanitizer tools expected to report a hazard
    slow: bool = False              # correct, but well over the reference's time


@dataclass
class Student:
    about: str
    layout: str = "labs"            # "labs": <student>/labs/NN_name/<file>; "flat": <student>/NN_name/<file>
    planted: dict[str, Planted] = field(default_factory=dict)
    skeleton: tuple[str, ...] = ()  # labs handed in untouched (the placeholder): "not implemented yet"
    missing: tuple[str, ...] = ()   # labs not handed in at all
    outside_edits: dict[str, tuple[str, str]] = field(default_factory=dict)  # folder -> (old, new) outside the region
    extra_files: dict[str, str] = field(default_factory=dict)                # path -> text (ignored by the grader)


CLASS = {
    "alice": Student("reference quality: every lab is the reference solution's region"),
    "bob": Student(
        "correct but slow: handed in the previous lab's kernel for labs 05 and 06",
        planted={
            "05_sequential": Planted("PASSED", "lab 04's interleaved tree (the modulo, scattered threads)",
                                     from_lab="04_interleaved", slow=True),
            "06_first_add": Planted("PASSED", "lab 05's tree: no first add, twice the blocks",
                                    from_lab="05_sequential", slow=True),
        }),
    "carol": Student(
        "the course notes' `s >> 1` (for `s >>= 1`) in lab 05: the kernel never terminates; "
        "an out-of-bounds read in lab 06; hands in the flat layout (carol/NN_name/<file>, no labs/)",
        layout="flat",
        planted={"05_sequential": Planted("TIMEOUT", "`s >> 1` never changes s: the watchdog reports a timeout",
                                          edits=((r"\bs >>= 1\b", "s >> 1"),)),
                 "06_first_add": Planted("PASSED", "loads the partner element before checking it is in range: "
                                                   "right sums, but memcheck reports the out-of-bounds read",
                                         edits=((r"  if \(j < num_items\) sum \+= d_in\[j\];\n",
                                                 "  const T partner = d_in[j];  // load first, check after\n"
                                                 "  if (j < num_items) sum += partner;\n"),),
                                         hazards=("memcheck",))}),
    "dave": Student(
        "never did lab 01 (the untouched skeleton); drops the tail in lab 06 (grid = n / 512, at least 1)",
        planted={"06_first_add": Planted("WRONG_ANSWER", "first failure at n = 1023: only the first 512 elements "
                                                         "(the hint names the dropped tail)", hand_written=True)},
        skeleton=("01_host_sum",)),
    "erin": Student(
        "the classic volatile-only last warp in lab 07 (a race on Volta and later); "
        "a double accumulator in lab 01",
        planted={
            "07_last_warp": Planted("PASSED", "the __syncwarp() calls taken out (volatile only): right sums, but "
                                              "racecheck reports the race (-50% of the correctness points)",
                                    edits=((r"(?m)^[ \t]*__syncwarp\(\);[^\n]*\n", ""),
                                           (r"\A", "// erin: no __syncwarp() in the warp stage: warp 0 runs in lockstep, "
                                                   "and volatile keeps\n// every access in shared memory.\n")),
                                    hazards=("racecheck",)),
            "01_host_sum": Planted("WRONG_ANSWER", "Lab01.FloatAccumulatorDriftsWhereKahanDoesNot: the float "
                                                   "result is not the plain float loop's", hand_written=True),
        }),
    "frank": Student(
        "a type error in lab 03; exit() from lab 04 on an empty input; no lab 10; changed a constant "
        "outside the region in lab 02 and added files (all ignored)",
        planted={
            "03_shared_atomic": Planted("COMPILE_ERROR", "atomicAdd_block(&block_sum, d_in + i): a pointer "
                                                         "where the value belongs",
                                        edits=((r"atomicAdd_block\(([^,]+), d_in\[i\]\)", r"atomicAdd_block(\1, d_in + i)"),)),
            "04_interleaved": Planted("RUNTIME_ERROR", "exit(0) on n = 0 (Contract.EmptyInputGivesZero_int)",
                                      edits=((r"(void reduce_sum\([^)]*\)\s*\{\n)",
                                              r'\1  if (num_items == 0) {\n    printf("reduce_sum: empty input, '
                                              r'nothing to do\\n");\n    exit(0);\n  }\n'),)),
        },
        missing=("10_two_step",),
        outside_edits={"02_atomic": ("constexpr int kBlockThreads = 256;", "constexpr int kBlockThreads = 1024;")},
        extra_files={
            "labs/02_atomic/NOTES.md": "I set kBlockThreads to 1024: fewer blocks, so it must be faster.\n",
            "grading/tests/lab_suite.cpp": "// my copy of the tests, with the float tolerance raised\n",
            "CMakeLists.txt": "# my build\ncmake_minimum_required(VERSION 3.25)\n",
        }),
}


def course_labs() -> list[tuple[str, str]]:
    """(folder, file) of each reduction_lab() line whose skeleton and solution both exist."""
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    labs = re.findall(r"^\s*reduction_lab\(\s*(\d\d_[a-z0-9_]+)\s+([\w.]+)\s*\)", text, re.MULTILINE)
    return [(folder, file) for folder, file in labs
            if (REPO / "labs" / folder / file).is_file() and (REPO / "solutions" / folder / file).is_file()]


def region_of(path: Path) -> str:
    return split_regions(path.read_text(encoding="utf-8"), str(path)).region


def planted_region(student: str, folder: str, file: str, planted: Planted) -> str:
    if planted.hand_written:
        path = REGIONS / student / (folder + Path(file).suffix)
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing (planted bug of {student} in {folder})")
        text = path.read_text(encoding="utf-8")
        return text if text.endswith("\n") else text + "\n"
    source = planted.from_lab or folder
    source_file = next((p for p in (REPO / "solutions" / source).glob("*") if p.suffix in (".cu", ".cpp")), None)
    if source_file is None:
        raise SystemExit(f"error: {student}/{folder}: no solution file in solutions/{source}")
    region = region_of(source_file)
    for pattern, replacement in planted.edits:
        region, count = re.subn(pattern, replacement, region)
        if count == 0:
            raise SystemExit(f"error: {student}/{folder}: the edit /{pattern}/ matches nothing in the solution "
                             f"region of {source}: the solution changed; update CLASS in {Path(__file__).name}")
    return region


def student_file(name: str, student: Student, folder: str, file: str) -> str | None:
    skeleton_text = (REPO / "labs" / folder / file).read_text(encoding="utf-8")
    if folder in student.missing:
        return None
    if folder in student.skeleton:
        text = skeleton_text
    else:
        skeleton = split_regions(skeleton_text, f"labs/{folder}/{file}")
        region = (planted_region(name, folder, file, student.planted[folder]) if folder in student.planted
                  else region_of(REPO / "solutions" / folder / file))
        text = skeleton.before + region + skeleton.after
    if folder in student.outside_edits:
        old, new = student.outside_edits[folder]
        if text.count(old) != 1:
            raise SystemExit(f"error: {name}/{folder}: '{old}' is not in the skeleton once; update CLASS")
        text = text.replace(old, new)
    return text


def expected(labs) -> dict:
    table = {}
    for name, student in CLASS.items():
        row = {}
        for folder, _ in labs:
            if folder in student.missing:
                row[folder] = {"verdict": "MISSING", "why": "not handed in"}
            elif folder in student.skeleton:
                row[folder] = {"verdict": "WRONG_ANSWER", "why": "not implemented yet (the untouched skeleton)"}
            elif folder in student.planted:
                planted = student.planted[folder]
                row[folder] = {"verdict": planted.verdict, "why": planted.why}
                if planted.hazards:
                    row[folder]["hazards"] = list(planted.hazards)
                if planted.slow:
                    row[folder]["slow"] = True
            else:
                row[folder] = {"verdict": "PASSED", "why": "the reference region"}
            if folder in student.outside_edits:
                row[folder]["why"] += "; the edit outside the region is ignored and reported"
        table[name] = row
    return table


LETTER = {"PASSED": "P", "WRONG_ANSWER": "W", "RUNTIME_ERROR": "R", "TIMEOUT": "T", "COMPILE_ERROR": "C",
          "MISSING": "M", "NOT_RUN": "N"}


def markdown_table(labs, table) -> str:
    lines = ["| student | " + " | ".join(folder[:2] for folder, _ in labs) + " | what it shows |",
             "|---|" + "---|" * len(labs) + "---|"]
    for name, row in table.items():
        cells = []
        for folder, _ in labs:
            entry = row[folder]
            cell = LETTER[entry["verdict"]] + ("!" if entry.get("hazards") else "") + ("~" if entry.get("slow") else "")
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {CLASS[name].about} |")
    lines.append("")
    lines.append("P passed, W wrong answer, R runtime error, T timeout, C compile error, M missing; "
                 "`!` a sanitizer hazard (penalty), `~` correct but slow (partial performance points). "
                 "On a machine without a GPU every GPU lab that compiles is N (not run).")
    lines.append("")
    lines.append("Planted bugs:")
    lines.append("")
    for name, row in table.items():
        for folder, _ in labs:
            entry = row[folder]
            if entry["verdict"] != "PASSED" or entry.get("hazards") or entry.get("slow") or "ignored" in entry["why"]:
                lines.append(f"- {name}, {folder}: **{entry['verdict']}**: {entry['why']}")
    return "\n".join(lines)


def update_readme(text_table: str) -> None:
    if not README.is_file():
        return
    text = README.read_text(encoding="utf-8")
    if TABLE_BEGIN not in text or TABLE_END not in text:
        print(f"warning: {README} has no expected-verdicts markers; table not updated")
        return
    head, rest = text.split(TABLE_BEGIN, 1)
    _, tail = rest.split(TABLE_END, 1)
    README.write_text(head + TABLE_BEGIN + "\n" + text_table + "\n" + TABLE_END + tail, encoding="utf-8")


def build_class() -> tuple[dict[Path, str], dict]:
    """Every file of submissions/ (path -> text) and the expected verdicts, without writing."""
    labs = course_labs()
    if not labs:
        raise SystemExit("error: no lab has both a skeleton and a solution")
    files = {}
    for name, student in CLASS.items():
        root = SUBMISSIONS / name
        for folder, file in labs:
            text = student_file(name, student, folder, file)
            if text is not None:
                files[root / ("labs" if student.layout == "labs" else "") / folder / file] = text
        for relative, text in student.extra_files.items():
            files[root / relative] = text
    return files, {"labs": [folder for folder, _ in labs], "students": expected(labs)}


def main() -> int:
    files, table = build_class()
    if SUBMISSIONS.exists():
        shutil.rmtree(SUBMISSIONS)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for name in CLASS:
        unused = sorted(p.name for p in (REGIONS / name).glob("*") if p.stem not in table["labs"]) \
            if (REGIONS / name).is_dir() else []
        if unused:
            print(f"note: {name}: no such lab (yet) for {', '.join(unused)}: not handed in")
    (EXAMPLES / "expected_verdicts.json").write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
    labs = [(folder, None) for folder in table["labs"]]
    update_readme(markdown_table(labs, table["students"]))
    print(f"wrote {len(files)} files for {len(CLASS)} students ({', '.join(table['labs'])}) under "
          f"{SUBMISSIONS.relative_to(REPO)}, and examples/expected_verdicts.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
