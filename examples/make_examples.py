#!/usr/bin/env python3
"""Writes a class of submissions into a folder, from the current skeletons and solutions.

Three classes, all made from committed recipes and never committed themselves:

- `example`: six made-up students who between them get every verdict (the CLASS table below,
  hand-written regions in examples/regions/<student>/<lab folder>.<ext>);
- `attacks`: hostile students, each with the verdicts and points it must get, and two honest
  classmates whose records the attacks must leave alone (examples/attack_class.py, regions in
  examples/attacks/regions/<attacker>/<lab folder>.<ext>);
- `synthetic`: --students N honest students for the grading throughput benchmark, each lab one of
  the example class's recipes, mixed by --seed (examples/synthetic_class.py).

Every student file is the official skeleton with a STUDENT CODE region spliced in: the reference
solution's region, a region made from it by the recipe's edits, or a hand-written one. So the
class follows the labs and solutions as they change. Beside the students the folder gets
expected_verdicts.json: for each student and lab the accepted verdicts and points (from
grading/policy.toml), and what a machine without a GPU must give instead.

    python3 examples/make_examples.py --class example --out build/classes/example
    python3 examples/make_examples.py --class attacks --out build/classes/attacks [--compile-check [BUILD]]
    python3 examples/make_examples.py --class synthetic --students 60 --seed 1 --out build/classes/synthetic
    python3 examples/make_examples.py --readme   # rewrite the verdict tables in examples/README.md
                                                 # and examples/attacks/README.md (they are committed)

--compile-check compiles every lab file of the written class with the build's nvcc command line
(BUILD/reduction_labs.json; without BUILD: nvcc from CUDACXX, PATH or /usr/local/cuda, sm_90) and
fails unless exactly the labs expected to be COMPILE_ERROR fail, and the grader's library rule
(grading/grader/judge/libraries.py, on nvcc's -MD list) refuses exactly the files marked needs_library.
A file marked reaches_outside (it names files outside the grader's compile view) may compile here or
fail for a file this machine lacks (grading/grader/judge/compile_view.py's words for one), nothing else.
Compiling runs no student code.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent
REPO = EXAMPLES.parent
sys.path.insert(0, str(REPO / "grading"))
sys.path.insert(0, str(EXAMPLES))

from grader.judge.compile_view import missing_files  # noqa: E402
from grader.judge.flags import KINDS as FLAG_KINDS  # noqa: E402
from grader.judge.libraries import parse_dependencies, refused_headers, refused_libraries  # noqa: E402
from grader.manifest import Lab  # noqa: E402
from grader.policy import Policy  # noqa: E402
from grader.judge.submission import split_regions  # noqa: E402
from grader.judge.verdicts import LETTERS  # noqa: E402
from grader.outputs import student_names  # noqa: E402  (a name as a console or a README can show it)

import attack_class  # noqa: E402
import synthetic_class  # noqa: E402

REGIONS = EXAMPLES / "regions"
ATTACK_REGIONS = EXAMPLES / "attacks" / "regions"
README = EXAMPLES / "README.md"
ATTACKS_README = EXAMPLES / "attacks" / "README.md"
POLICY = REPO / "grading" / "policy.toml"
EXPECTED_FILE = "expected_verdicts.json"
TABLE_BEGIN = "<!-- expected-verdicts:begin (written by make_examples.py) -->"
TABLE_END = "<!-- expected-verdicts:end -->"
CLASSES = ("example", "attacks", "synthetic")


@dataclass
class Planted:
    """A lab with a planted bug, and the verdict it gets.

    Its region is the reference solution's region of `from_lab` (default: the lab itself) with
    `edits` applied, each a (regex, replacement) that must match at least once; or, when
    `hand_written` is set, examples/regions/<author or student>/<lab folder>.<ext> as it is. Edits of the
    solution keep a bug in step with the solution's design; a hand-written region is for a bug
    that is the student's own design."""
    verdict: str
    why: str
    from_lab: str | None = None
    edits: tuple[tuple[str, str], ...] = ()
    hand_written: bool = False
    author: str | None = None       # whose hand-written region, when not the student's own (synthetic class)
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
        "never did lab 01 (the untouched skeleton); drops the tail in lab 06 (grid = n / 512, at least 1); "
        "never resets lab 11's int sum word",
        planted={"06_first_add": Planted("WRONG_ANSWER", "first failure at n = 1023: only the first 512 elements "
                                                         "(the hint names the dropped tail)", hand_written=True),
                 "11_single_pass": Planted("WRONG_ANSWER", "never writes 0 back to the int sum word: after the first "
                                                           "int call with several blocks the count never again ends at "
                                                           "the last block, and *d_out is never written",
                                           edits=((r"  DeviceWord\(g_int_sum\)\.store\(0, kRelaxed\);[^\n]*",
                                                   "  // dave: no reset"),))},
        skeleton=("01_host_sum",)),
    "erin": Student(
        "the classic volatile-only last warp in lab 07 (a race on Volta and later); "
        "a double accumulator in lab 01; pads the last warp with 0 in lab 12 (right sums, wrong products)",
        planted={
            "12_any_operator": Planted("WRONG_ANSWER", "the last warp's idle lanes padded with Value{} (0) where "
                                                       "Op::identity() belongs: the sum entry and every sum are "
                                                       "right, every product is 0 (the grader's operator cases)",
                                       edits=((r"warp_totals\[lane\] : Op::identity\(\)", "warp_totals[lane] : Value{}"),)),
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


# ---------------------------------------------------------------------------------------------
# The course: labs, regions, points


def course_labs() -> list[tuple[str, str]]:
    """(folder, file) of each reduction_lab() line whose skeleton and solution both exist."""
    text = (REPO / "CMakeLists.txt").read_text(encoding="utf-8")
    labs = re.findall(r"^\s*reduction_lab\(\s*(\d\d_[a-z0-9_]+)\s+([\w.]+)\s*\)", text, re.MULTILINE)
    return [(folder, file) for folder, file in labs
            if (REPO / "labs" / folder / file).is_file() and (REPO / "solutions" / folder / file).is_file()]


def region_of(path: Path) -> str:
    return split_regions(path.read_text(encoding="utf-8"), str(path)).region


def solution_region(folder: str) -> str:
    source = next((p for p in sorted((REPO / "solutions" / folder).glob("*")) if p.suffix in (".cu", ".cpp")), None)
    if source is None:
        raise SystemExit(f"error: no solution file in solutions/{folder}")
    return region_of(source)


def spliced(folder: str, file: str, region: str) -> str:
    skeleton = split_regions((REPO / "labs" / folder / file).read_text(encoding="utf-8"), f"labs/{folder}/{file}")
    if region and not region.endswith("\n"):
        region += "\n"
    return skeleton.before + region + skeleton.after


class Points:
    """Each lab's correctness and performance points and the sanitizer penalties, as grade.py reads
    them: grading/policy.toml through the grader's own Policy (settings.py holds the defaults)."""

    def __init__(self, path: Path = POLICY):
        self.policy = Policy.load(path if path.is_file() else None)

    def full(self, folder: str, kind: str) -> float:
        lab = Lab(folder=folder, file="", module="")
        return self.policy.correctness_points(lab) if kind == "correctness" else self.policy.performance_points(lab)

    def bounds(self, folder: str, kind: str, amount) -> list[float]:
        """[low, high] points of `kind` for an attack_class amount: FULL, ANY or a number."""
        full = self.full(folder, kind)
        if amount == attack_class.ANY:
            return _range(0, full)
        if isinstance(amount, attack_class.Without):
            return _range(0, full * max(0.0, 1.0 - sum(self.policy.penalty(tool) for tool in amount.tools)))
        return _range(full if amount == attack_class.FULL else float(amount))


def _range(low: float, high: float | None = None) -> list[float]:
    return [round(low, 2), round(low if high is None else high, 2)]


def decided_without_gpu(folder: str, verdicts: set[str]) -> bool:
    """Lab 01 runs on the host; a compile error or a missing file is known before anything runs."""
    return folder == "01_host_sum" or verdicts <= {"COMPILE_ERROR", "MISSING"}


NOT_RUN = {"verdict": "NOT_RUN", "correctness": None, "performance": None}


# ---------------------------------------------------------------------------------------------
# The example class


def planted_region(student: str, folder: str, file: str, planted: Planted) -> str:
    if planted.hand_written:
        path = REGIONS / (planted.author or student) / (folder + Path(file).suffix)
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing (planted bug of {student} in {folder})")
        return path.read_text(encoding="utf-8")
    source = planted.from_lab or folder
    return edited_region(source, planted.edits, f"{student}/{folder}", f"CLASS in {Path(__file__).name}")


def edited_region(source: str, edits, who: str, where: str) -> str:
    """The solution region of lab `source` with regex `edits` applied, each of which must match."""
    region = solution_region(source)
    for pattern, replacement in edits:
        region, count = re.subn(pattern, replacement, region)
        if count == 0:
            raise SystemExit(f"error: {who}: the edit /{pattern}/ matches nothing in the solution region of "
                             f"{source}: the solution changed; update {where}")
    return region


def student_file(name: str, student: Student, folder: str, file: str) -> str | None:
    if folder in student.missing:
        return None
    if folder in student.skeleton:
        text = (REPO / "labs" / folder / file).read_text(encoding="utf-8")
    else:
        region = (planted_region(name, folder, file, student.planted[folder]) if folder in student.planted
                  else solution_region(folder))
        text = spliced(folder, file, region)
    if folder in student.outside_edits:
        old, new = student.outside_edits[folder]
        if text.count(old) != 1:
            raise SystemExit(f"error: {name}/{folder}: '{old}' is not in the skeleton once; update CLASS")
        text = text.replace(old, new)
    return text


def students_expected(labs, points: Points, roster: dict[str, Student]) -> dict:
    table = {}
    for name, student in roster.items():
        row = {}
        for folder, _ in labs:
            if folder in student.missing:
                entry = {"verdict": "MISSING", "why": "not handed in"}
            elif folder in student.skeleton:
                entry = {"verdict": "WRONG_ANSWER", "why": "not implemented yet (the untouched skeleton)"}
            elif folder in student.planted:
                planted = student.planted[folder]
                entry = {"verdict": planted.verdict, "why": planted.why}
                if planted.hazards:
                    entry["hazards"] = list(planted.hazards)
                if planted.slow:
                    entry["slow"] = True
            else:
                entry = {"verdict": "PASSED", "why": "the reference region"}
            if folder in student.outside_edits:
                entry["why"] += "; the edit outside the region is ignored and reported"
            correctness, performance = _range(0), _range(0)
            if entry["verdict"] == "PASSED":
                lost = min(1.0, sum(points.policy.penalty(tool) for tool in entry.get("hazards", ())))
                correctness = _range(points.full(folder, "correctness") * (1 - lost))
                full = points.full(folder, "performance")
                performance = _range(0, full * 0.99) if entry.get("slow") else _range(full)
            entry["accept"] = [{"verdict": entry["verdict"], "correctness": correctness, "performance": performance}]
            entry["without_gpu"] = (entry["accept"] if decided_without_gpu(folder, {entry["verdict"]})
                                    else [dict(NOT_RUN)])
            row[folder] = entry
        table[name] = row
    return table


def students_files(labs, roster: dict[str, Student]) -> dict[str, str]:
    files = {}
    for name, student in roster.items():
        for folder, file in labs:
            text = student_file(name, student, folder, file)
            if text is not None:
                files[f"{name}/{'labs/' if student.layout == 'labs' else ''}{folder}/{file}"] = text
        for relative, text in student.extra_files.items():
            files[f"{name}/{relative}"] = text
    return files


def build_example(labs) -> tuple[dict[str, str | Link], dict]:
    return students_files(labs, CLASS), {"class": "example", "labs": [folder for folder, _ in labs],
                                         "students": students_expected(labs, Points(), CLASS)}


# ---------------------------------------------------------------------------------------------
# The synthetic class (examples/synthetic_class.py decides who gets what)

TYPO = Planted("COMPILE_ERROR", "a typo: the region's first `num_items` spelled `num_itmes` (an undeclared name)",
               edits=((r"\A((?s:.*?))\bnum_items\b", r"\1num_itmes"),))


def synthetic_planted(folder: str, recipe) -> Planted:
    """The Planted of a synthetic student's lab: an example student's bug applied to this lab, the
    previous lab's kernel (slow, or wrong where it uses atomics the lab forbids), or the typo."""
    if recipe.source == "previous":
        before = synthetic_class.SLOW_FROM[folder]
        return Planted("PASSED", f"the previous lab's kernel ({before})", from_lab=before, slow=True)
    if recipe.source == "atomic":
        before = synthetic_class.ATOMIC_FROM[folder]
        return Planted("WRONG_ANSWER", f"the previous lab's kernel ({before}): right ints, but its float atomics add "
                                       "in another order on every call, and this lab promises bitwise reproducible "
                                       "floats (its README: no atomics)", from_lab=before)
    if recipe.source == "typo":
        return TYPO
    author, lab = recipe.source.split("/")
    planted = CLASS[author].planted[lab]
    return replace(planted, author=author if planted.hand_written else None,
                   why=f"{author}'s {lab[:2]}: {planted.why}")


def synthetic_roster(labs, count: int, seed: int) -> tuple[dict[str, Student], dict[str, dict[str, str]]]:
    """The synthetic students as Students, and each one's kind per lab."""
    roster, kinds = {}, {}
    for planned in synthetic_class.plan(count, seed, [folder for folder, _ in labs]):
        student = Student(planned.about(), layout=planned.layout)
        for folder, recipe in planned.labs.items():
            if recipe.source == "skeleton":
                student.skeleton += (folder,)
            elif recipe.source != "reference":
                student.planted[folder] = synthetic_planted(folder, recipe)
        roster[planned.name] = student
        kinds[planned.name] = {folder: recipe.kind for folder, recipe in planned.labs.items()}
    return roster, kinds


def kind_counts(expected: dict) -> dict[str, int]:
    """How many labs of a synthetic class are of each kind (reference, slow, ...)."""
    counts: dict[str, int] = {}
    for row in expected["students"].values():
        for entry in row.values():
            counts[entry["kind"]] = counts.get(entry["kind"], 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def build_synthetic(labs, count: int, seed: int) -> tuple[dict[str, str | Link], dict]:
    roster, kinds = synthetic_roster(labs, count, seed)
    expected = students_expected(labs, Points(), roster)
    for name, row in expected.items():
        for folder, entry in row.items():
            entry["kind"] = kinds[name][folder]
    return students_files(labs, roster), {"class": "synthetic", "seed": seed, "labs": [folder for folder, _ in labs],
                                          "students": expected}


# ---------------------------------------------------------------------------------------------
# The attack class


@dataclass(frozen=True)
class Link:
    """A symbolic link in a class folder (the layout attacks)."""
    target: str


def attack_region(attacker_id: str, folder: str, file: str, hand_in) -> str:
    if hand_in.region == "reference":
        return edited_region(folder, hand_in.edits, f"{attacker_id}/{folder}", "examples/attack_class.py")
    if hand_in.edits:
        raise SystemExit(f"error: {attacker_id}/{folder}: edits apply to region=\"reference\" only")
    path = ATTACK_REGIONS / attacker_id / (folder + Path(file).suffix)
    if not path.is_file():
        raise SystemExit(f"error: {path} is missing (the attack of {attacker_id} in {folder})")
    own = path.read_text(encoding="utf-8").replace("@REPO@", str(REPO))   # a path into this repository
    if hand_in.region == "own":
        return own
    if hand_in.region != "reference+own":
        raise SystemExit(f"error: {attacker_id}/{folder}: unknown region kind '{hand_in.region}'")
    honest, count = re.subn(r"\breduce_sum\b", "honest_reduce_sum", solution_region(folder))
    if count == 0:
        raise SystemExit(f"error: {attacker_id}/{folder}: the solution of {folder} has no reduce_sum to wrap")
    return honest + "\n" + own


def attack_outcomes(folder: str, outcomes, points: Points) -> list[dict]:
    unknown = sorted({kind for o in outcomes for kind in o.flags} - set(FLAG_KINDS))
    if unknown:
        raise SystemExit(f"error: {folder}: no flag kind {', '.join(unknown)} in grading/grader/judge/flags.py")
    return [{"verdict": o.verdict, "correctness": points.bounds(folder, "correctness", o.correctness),
             "performance": points.bounds(folder, "performance", o.performance),
             **({"names": o.names} if o.names else {}), **({"flags": list(o.flags)} if o.flags else {})}
            for o in outcomes]


def attack_expected(labs, points: Points) -> dict:
    table = {}
    for attacker_id, attacker in attack_class.ATTACKERS.items():
        row = {}
        for folder, _ in labs:
            hand_in = attacker.labs.get(folder)
            outcomes = hand_in.outcomes if hand_in else attack_class.MISSING
            accept = attack_outcomes(folder, outcomes, points)
            entry = {"verdict": outcomes[0].verdict, "why": hand_in.why if hand_in else "not handed in",
                     "accept": accept,
                     "without_gpu": (accept if decided_without_gpu(folder, {o.verdict for o in outcomes})
                                     else [dict(NOT_RUN)])}
            if hand_in and hand_in.needs_library:
                entry["needs_library"] = True
            if hand_in and hand_in.reaches_outside:
                entry["reaches_outside"] = True
            row[folder] = entry
        table[attacker.folder or attacker_id] = row
    return table


def litter_files(name: str) -> dict[str, str]:
    """The generated part of litter's mess: many files, a deep folder, a big file."""
    sizes = attack_class.GENERATED_LITTER.get(name)
    if not sizes:
        return {}
    files = {f"junk/{k // 100:02d}/file{k:04d}.txt": "" for k in range(sizes["junk files"])}
    files["/".join(["deep"] * sizes["folder depth"]) + "/bottom.txt"] = "down here\n"
    files["CMakeLists.txt"] = ("# " + "x" * 98 + "\n") * (sizes["big file bytes"] // 101)
    return files


def build_attacks(labs) -> tuple[dict[str, str | Link], dict]:
    files: dict[str, str | Link] = {}
    lab_files = dict(labs)
    for attacker_id, attacker in attack_class.ATTACKERS.items():
        name = attacker.folder or attacker_id
        if attacker.folder_link:
            files[name] = Link(attacker.folder_link)
            continue
        for folder, hand_in in attacker.labs.items():
            if folder not in lab_files:
                continue  # a lab this course no longer has
            file = lab_files[folder]
            if hand_in.folder_link:
                files[f"{name}/labs/{folder}"] = Link(hand_in.folder_link.format(repo=REPO))
            elif hand_in.link:
                files[f"{name}/labs/{folder}/{file}"] = Link(hand_in.link.format(repo=REPO))
            else:
                files[f"{name}/labs/{folder}/{file}"] = spliced(folder, file,
                                                               attack_region(attacker_id, folder, file, hand_in))
        for relative, text in {**attacker.extra_files, **litter_files(attacker_id)}.items():
            files[f"{name}/{relative}"] = text
    attackers = {attacker.folder or attacker_id: {
        "id": attacker_id, "kind": attacker.kind, "items": list(attacker.items), "attack": attacker.attack,
        "victim": attacker.kind == "victim", "refused": attacker.refused}
        for attacker_id, attacker in attack_class.ATTACKERS.items()}
    return files, {"class": "attacks", "labs": [folder for folder, _ in labs],
                   "students": attack_expected(labs, Points()), "attackers": attackers,
                   "items": {str(k): v for k, v in attack_class.ATTACK_ITEMS.items()},
                   "invariants": attack_class.INVARIANTS}


# ---------------------------------------------------------------------------------------------
# Building and writing


def build_class(kind: str, students: int = synthetic_class.DEFAULT_STUDENTS,
                seed: int = synthetic_class.DEFAULT_SEED) -> tuple[dict[str, str | Link], dict]:
    """Every entry of the class folder (relative path -> text or Link) and the expected
    verdicts, without writing anything. `students` and `seed` make the synthetic class."""
    labs = course_labs()
    if not labs:
        raise SystemExit("error: no lab has both a skeleton and a solution")
    if kind == "example":
        return build_example(labs)
    if kind == "attacks":
        return build_attacks(labs)
    if kind == "synthetic":
        return build_synthetic(labs, students, seed)
    raise SystemExit(f"error: no class '{kind}' (choose from {', '.join(CLASSES)})")


def expected_verdicts(kind: str, **synthetic) -> dict:
    """The class's expected_verdicts.json, as write_class writes it."""
    return build_class(kind, **synthetic)[1]


def _holds_a_file(folder: Path) -> bool:
    for _, _, names in os.walk(folder):
        if names:
            return True
    return False


def _check_out(out: Path) -> None:
    """`out` may be a new folder, one with no files (a build creates the folders of the files it
    expects) or a class this script wrote: a mistyped --out must never lose anything."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SystemExit(f"error: {out} is not a folder")
    if out.is_dir() and not (out / EXPECTED_FILE).is_file() and _holds_a_file(out):
        raise SystemExit(f"error: {out} is not empty and holds no {EXPECTED_FILE}: not a class this script "
                         "wrote; choose another --out")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def write_class(kind: str, out: Path, **synthetic) -> dict:
    """Makes `out` hold exactly the class and its expected_verdicts.json; returns that.

    Files already as they should be are left alone (same text, same time stamp), so a build that
    compiles some of them does not redo it after every writing; everything else is rewritten,
    and whatever the class no longer has is removed."""
    out = Path(out)
    files, expected = build_class(kind, **synthetic)
    files = {**files, EXPECTED_FILE: json.dumps(expected, indent=1, ensure_ascii=False) + "\n"}
    _check_out(out)
    wanted_dirs = {parent for relative in files for parent in Path(relative).parents if parent != Path(".")}
    out.mkdir(parents=True, exist_ok=True)
    for root, dirs, names in os.walk(out, topdown=True):  # does not follow links
        for name in dirs + names:
            path = Path(root) / name
            relative = path.relative_to(out)
            content = files.get(relative.as_posix())
            keep = (relative in wanted_dirs and path.is_dir() and not path.is_symlink()) or (
                content is not None and (isinstance(content, Link) == path.is_symlink()) and
                (path.is_symlink() or path.is_file()))
            if not keep:
                _remove(path)
        dirs[:] = [d for d in dirs if (Path(root) / d).is_dir() and not (Path(root) / d).is_symlink()]
    for relative, content in sorted(files.items(), key=lambda item: isinstance(item[1], Link)):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            if path.is_symlink() and os.readlink(path) == content.target:
                continue
            if path.is_symlink():
                path.unlink()
            os.symlink(content.target, path)
        elif not path.is_file() or path.read_text(encoding="utf-8", errors="replace") != content:
            path.write_text(content, encoding="utf-8")
    return expected


# ---------------------------------------------------------------------------------------------
# README tables

def example_table(expected: dict) -> str:
    labs = expected["labs"]
    lines = ["| student | " + " | ".join(folder[:2] for folder in labs) + " | what it shows |",
             "|---|" + "---|" * len(labs) + "---|"]
    for name, row in expected["students"].items():
        cells = [LETTERS[row[f]["verdict"]] + ("!" if row[f].get("hazards") else "") + ("~" if row[f].get("slow") else "")
                 for f in labs]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {CLASS[name].about} |")
    lines += ["", "P passed, W wrong answer, R runtime error, T timeout, C compile error, M missing; "
                  "`!` a sanitizer hazard (penalty), `~` correct but slow (partial performance points). "
                  "On a machine without a GPU every GPU lab that compiles is N (not run).",
              "", "Planted bugs:", ""]
    for name, row in expected["students"].items():
        for folder in labs:
            entry = row[folder]
            if entry["verdict"] != "PASSED" or entry.get("hazards") or entry.get("slow") or "ignored" in entry["why"]:
                lines.append(f"- {name}, {folder}: **{entry['verdict']}**: {entry['why']}")
    return "\n".join(lines)


def _points(accept: list[dict]) -> str:
    def one(outcome):
        shown = [f"{low:g}" if low == high else f"{low:g}..{high:g}"
                 for low, high in (outcome["correctness"], outcome["performance"])]
        named = f" naming \"{outcome['names']}\"" if outcome.get("names") else ""
        kinds = outcome.get("flags") or []
        flagged = f" (flagged {', '.join(kinds[:-1])}{' or ' if len(kinds) > 1 else ''}{kinds[-1]})" if kinds else ""
        return f"{LETTERS[outcome['verdict']]} {shown[0]}+{shown[1]}{named}{flagged}"
    return " or ".join(one(outcome) for outcome in accept)


def attack_table(expected: dict) -> str:
    lines = ["| student | kind | items | lab: must get (verdict correctness+performance) | attack |",
             "|---|---|---|---|---|"]
    for name, meta in expected["attackers"].items():
        row = expected["students"][name]
        handed = [f"{folder[:2]}: {_points(entry['accept'])}" for folder, entry in row.items()
                  if entry["verdict"] != "MISSING" or folder in attack_class.ATTACKERS[meta["id"]].labs]
        must = "; ".join(handed) or "every lab M 0+0"
        if meta["refused"]:
            must = f"refused, the reason naming \"{meta['refused']}\": no record, no row (its labs: {must})"
        shown = student_names.shown(name).replace("|", "\\|")
        lines.append(f"| `{shown}` | {meta['kind']} | {', '.join(map(str, sorted(meta['items']))) or '-'} | {must} | "
                     f"{meta['attack']} |")
    lines += ["", "Every lab not listed is M (missing) 0+0. P passed, W wrong answer, R runtime error, T timeout, "
                  "C compile error, M missing; \"flagged K\": the record also holds an integrity flag of kind K for "
                  "the lab (grading/grader/judge/flags.py). Without a GPU, a GPU lab that compiles must be N (not run, blank).",
              "", "Attack items:", ""]
    lines += [f"{number}. {text}" for number, text in expected["items"].items()]
    lines += ["", "Class-level invariants (`examples/check_class.py`):", ""]
    lines += [f"- {text}" for text in expected["invariants"]]
    return "\n".join(lines)


def readme_texts() -> dict[Path, str]:
    """The two READMEs with the tables this script writes: path -> full text."""
    texts = {}
    for path, table in ((README, example_table(expected_verdicts("example"))),
                        (ATTACKS_README, attack_table(expected_verdicts("attacks")))):
        text = path.read_text(encoding="utf-8")
        if TABLE_BEGIN not in text or TABLE_END not in text:
            raise SystemExit(f"error: {path} has no expected-verdicts markers")
        head, rest = text.split(TABLE_BEGIN, 1)
        _, tail = rest.split(TABLE_END, 1)
        texts[path] = head + TABLE_BEGIN + "\n" + table + "\n" + TABLE_END + tail
    return texts


# ---------------------------------------------------------------------------------------------
# Compile check


def nvcc_command(build: Path | None) -> list[str]:
    if build is not None:
        manifest = json.loads((Path(build) / "reduction_labs.json").read_text(encoding="utf-8"))
        return [manifest["nvcc"], *manifest["module_flags"], *[f"-I{d}" for d in manifest["include_dirs"]]]
    nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    return [nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler=-fPIC,-fvisibility=hidden", "--cudart=shared",
            "-lineinfo", "-gencode=arch=compute_90,code=sm_90", f"-I{REPO / 'common' / 'include'}"]


def compile_check(out: Path, expected: dict, build: Path | None) -> int:
    """Compiles every regular lab file of the class at `out`; each must compile unless all its
    accepted verdicts are COMPILE_ERROR. Prints a line per file; returns the number of surprises.
    The compiler's output is shown only for a surprise (an expected failure may quote /etc/passwd).
    A text compiled once is not compiled again (the synthetic class hands in the same reference
    file many times), unless it includes by a quoted path, which depends on where it lies."""
    command = nvcc_command(build)
    lab_files = dict(course_labs())
    jobs = []
    for student, row in expected["students"].items():
        for folder, entry in row.items():
            for source in (out / student / "labs" / folder / lab_files[folder], out / student / folder / lab_files[folder]):
                linked = any(p.is_symlink() for p in [source, *source.parents] if p.is_relative_to(out) and p != out)
                if source.is_file() and not linked:
                    # with the whole toolkit in reach, as here, a file that uses a library compiles (and is refused)
                    must_fail = all(a["verdict"] == "COMPILE_ERROR" for a in entry["accept"]) and \
                        not entry.get("needs_library")
                    jobs.append((student, folder, source, must_fail))
                    break

    def key(source: Path) -> str:
        text = source.read_text(encoding="utf-8", errors="replace")
        return text + ("\0" + str(source) if '#include "' in text else "")

    def compile_once(source: Path):
        """The compile's result and the headers it opened (nvcc -MD, as the grader's compile lists them)."""
        with tempfile.TemporaryDirectory() as scratch:
            listed = Path(scratch) / "dependencies.d"
            result = subprocess.run([*command, "-MD", "-MF", str(listed), str(source), "-o", str(Path(scratch) / "module.so")],
                                    capture_output=True, text=True, errors="replace", cwd=source.parent)
            return result, parse_dependencies(listed.read_text(encoding="utf-8", errors="replace")) if listed.is_file() else []

    firsts = {}
    for job in jobs:
        firsts.setdefault(key(job[2]), job[2])
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = dict(zip(firsts, pool.map(compile_once, firsts.values())))
    print(f"compile check: {len(firsts)} distinct lab files of {len(jobs)}")
    policy = Policy.load(POLICY)
    surprises = 0
    for student, folder, source, must_fail in jobs:
        result, listed = results[key(source)]
        failed = result.returncode != 0
        if expected["students"][student][folder].get("reaches_outside"):   # as this machine's files allow
            must_fail = failed and bool(missing_files(result.stdout + result.stderr))
        # The grader's rule on the same list: a file that needs a library must be refused by name, and no
        # other file that compiles may be.
        refused = refused_headers(listed, refused_libraries(policy.compile, int(folder[:2])))
        library_ok = failed or bool(refused) == bool(expected["students"][student][folder].get("needs_library"))
        ok = failed == must_fail and library_ok
        surprises += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {student_names.shown(student)}/{folder}: "
              f"{'compile error' if failed else 'compiles'}"
              + (f", refused: <{refused[0]}>" if refused and not failed else "")
              + ("" if failed == must_fail else ' (expected ' + ('a compile error' if must_fail else 'to compile') + ')')
              + ("" if library_ok else " (expected " + ("no library header" if refused else "a refused library header")
                 + " in nvcc's include list)"))
        if not ok and failed:
            print("\n".join("    " + line for line in (result.stdout + result.stderr).splitlines()[-30:]))
    print(f"compile check: {len(jobs) - surprises} of {len(jobs)} lab files as expected")
    return surprises


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--class", dest="kind", choices=CLASSES, help="the class to write")
    parser.add_argument("--out", type=Path, help="the folder to write it into (emptied first)")
    parser.add_argument("--readme", action="store_true", help="rewrite the verdict tables in the READMEs")
    parser.add_argument("--compile-check", nargs="?", const="", metavar="BUILD",
                        help="compile every lab file of the written class (BUILD/reduction_labs.json's nvcc line)")
    parser.add_argument("--students", type=int, help=f"synthetic class: how many students "
                        f"(default {synthetic_class.DEFAULT_STUDENTS})")
    parser.add_argument("--seed", type=int, help=f"synthetic class: the seed that mixes the recipes "
                        f"(default {synthetic_class.DEFAULT_SEED})")
    args = parser.parse_args(argv)
    if not args.readme and not args.kind:
        parser.error("give --class and --out, or --readme")
    if (args.kind is None) != (args.out is None):
        parser.error("--class and --out go together")
    synthetic = {key: value for key, value in (("students", args.students), ("seed", args.seed)) if value is not None}
    if synthetic and args.kind != "synthetic":
        parser.error("--students and --seed are for --class synthetic")
    if synthetic.get("students", 1) < 1:
        parser.error("--students must be at least 1")
    if args.readme:
        for path, text in readme_texts().items():
            path.write_text(text, encoding="utf-8")
            print(f"wrote the verdict table in {path.relative_to(REPO)}")
    if args.kind:
        expected = write_class(args.kind, args.out, **synthetic)
        print(f"wrote the {args.kind} class ({len(expected['students'])} students, labs "
              f"{', '.join(expected['labs'])}) and {EXPECTED_FILE} into {args.out}")
        if args.kind == "synthetic":
            print("labs by kind: " + ", ".join(f"{kind} {count}" for kind, count in kind_counts(expected).items()))
        if args.compile_check is not None:
            return 1 if compile_check(args.out, expected, Path(args.compile_check) if args.compile_check else None) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
