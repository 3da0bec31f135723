#!/usr/bin/env python3
"""Checks a grading of a class against the class's expected_verdicts.json.

    python3 examples/check_class.py CLASS_DIR OUT_DIR [--cpu-only | --detect-gpu] [--secret VALUE]
                                    [--key-secret VALUE] [--no-process-check] [--running-before PIDS]
                                    [--exit-status N]
    python3 examples/check_class.py --sandbox-pids   (the pids of the sandbox's uids now, for --running-before)

CLASS_DIR is a class written by examples/make_examples.py (the students and expected_verdicts.json);
OUT_DIR is what grading/grade.py wrote for it (students/*.json, gradebook.csv, gradescope/, report/,
junit.xml, timings). It checks, and prints as a table:

- every student and lab: the verdict and the correctness and performance points are one of the
  accepted outcomes; with --cpu-only (a machine without a GPU) the outcomes a machine without a GPU
  must give instead (a GPU lab that compiles is NOT_RUN, no points); the student's total is the
  sum of its labs (blank when a lab was not run), and its gradebook row says the same; with
  --detect-gpu, --cpu-only when `nvidia-smi -L` finds no GPU here (the grader's first question);
  the last line then says what a machine without a GPU leaves unchecked;
- every graded student's real name (as its folder spells it) in junit.xml, its Gradescope
  results.json and its page of the class report; every folder to refuse (an attacker's "refused")
  has no record and no gradebook row and is in refused-folders.json with its reason, and no other
  folder is refused; with --exit-status, grade.py's status is 6 when a folder was to be refused, else 0;
- the class-level invariants: the records, the gradebook, the Gradescope folders and the JUnit
  suites name exactly the class folder's students but the refused; no gradebook cell is a
  spreadsheet formula; no report contains the grader's REDUCTION_TEST_SECRET
  value, the key its session keyring held (REDUCTION_KEY_SECRET: examples/with_session_key.py put it
  there), a line of a reference solution's region that the student did not hand in, or a line of
  /etc/passwd; every report parses and is small; no process of the sandbox's uids (those the
  records' sandbox description names: a uid per run of grading/grader/sandbox/run_users.py's range, or 65534
  for every run) is left running.

Exit status 0 when everything holds, 1 on any mismatch, 2 on a usage error. Standard library only.
The grader's record format is read in one place, read_record(), and assumed to be
record["student"], record["total"], record["sandbox"], record["labs"][folder]["verdict"],
record["labs"][folder]["detail"], record["labs"][folder]["score"]["correctness" | "performance" | "total"] and
record["flags"][i]["kind" | "lab"]. An outcome with "names" also wants those words in the lab's detail (the
reason, named); one with "flags" wants the record to flag the lab with one of those kinds (the grader
saw the attack: grading/grader/judge/flags.py).
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "plots"))
from class_files.csv_cells import FORMULA_STARTS, csv_text  # noqa: E402  (the grader's formula-safe cells)
from class_files.names import student_file_name  # noqa: E402  (the grader names a student's files with it)
sys.path.insert(0, str(REPO / "grading"))
from grader.outputs.student_paths import REFUSED_FILE  # noqa: E402
from grader.contract import ExitStatus  # noqa: E402
from grader.sandbox.run_users import RUN_UIDS, SHARED_UID, processes_of, uids_described  # noqa: E402  (one definition)
from grader.outputs.student_names import padded, shown, width  # noqa: E402  (a name as a console shows it)

SANDBOX_UIDS = {*RUN_UIDS, SHARED_UID}

EXPECTED_FILE = "expected_verdicts.json"
STUDENT_REPORT_LIMIT = 1 << 20      # students/<s>.json, gradescope/<s>/results.json
CLASS_REPORT_LIMIT = 8 << 20        # gradebook.csv, junit.xml, timings.*
TOLERANCE = 0.011                   # points are rounded to 2 decimals
MIN_SECRET_LINE = 20                # shorter solution lines ("return sum;") are not distinctive


# ---------------------------------------------------------------------------------------------
# The grader's outputs: the only place that knows the record format


@dataclass
class LabResult:
    verdict: str | None
    correctness: float | None
    performance: float | None
    total: float | None
    detail: str = ""
    flags: tuple[str, ...] = ()   # the kinds of the record's integrity flags for this lab


@dataclass
class Record:
    student: str
    total: float | None
    labs: dict[str, LabResult] = field(default_factory=dict)
    sandbox: str = ""   # how its code ran: "bubblewrap 0.8.0, uid per run (65000-65533), ..."


def read_record(path: Path) -> Record:
    data = json.loads(path.read_text(encoding="utf-8"))
    flags = [flag for flag in data.get("flags") or [] if isinstance(flag, dict)]
    labs = {}
    for folder, entry in (data.get("labs") or {}).items():
        score = entry.get("score") or {}
        labs[folder] = LabResult(entry.get("verdict"), score.get("correctness"), score.get("performance"),
                                 score.get("total"), str(entry.get("detail") or ""),
                                 tuple(str(flag.get("kind")) for flag in flags if flag.get("lab") == folder))
    return Record(str(data.get("student", path.stem)), data.get("total"), labs, str(data.get("sandbox", "")))


def read_gradebook(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return (rows[0], rows[1:]) if rows else ([], [])


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class Check:
    what: str
    ok: bool
    detail: str = ""
    student: str | None = None   # a student's check (shown in the student table), else class-level
    shown: str = ""              # the student table's cell: what the grader gave


def number(value) -> float | None:
    if value is None or value == "":
        return None
    return float(value)


def within(value, bounds) -> bool:
    if bounds is None:
        return value is None
    return value is not None and bounds[0] - TOLERANCE <= value <= bounds[1] + TOLERANCE


def describe(outcome: dict) -> str:
    def points(bounds):
        if bounds is None:
            return "-"
        return f"{bounds[0]:g}" if bounds[0] == bounds[1] else f"{bounds[0]:g}..{bounds[1]:g}"
    named = f" naming {outcome['names']!r}" if outcome.get("names") else ""
    kinds = outcome.get("flags") or []
    flagged = f" (flagged {', '.join(kinds[:-1])}{' or ' if len(kinds) > 1 else ''}{kinds[-1]})" if kinds else ""
    return f"{outcome['verdict']} {points(outcome['correctness'])}+{points(outcome['performance'])}{named}{flagged}"


def accepts(outcome: dict, lab: LabResult) -> bool:
    return (lab.verdict == outcome["verdict"] and within(lab.correctness, outcome["correctness"])
            and within(lab.performance, outcome["performance"]) and outcome.get("names", "") in lab.detail
            and (not outcome.get("flags") or any(kind in lab.flags for kind in outcome["flags"])))


def got(lab: LabResult | None, flags: bool = False) -> str:
    """The lab as graded; with `flags`, its flags' kinds too (a failed check says them)."""
    if lab is None:
        return "(no entry)"
    show = lambda value: "-" if value is None else f"{value:g}"  # noqa: E731
    flagged = f" flagged {', '.join(lab.flags)}" if flags and lab.flags else ""
    return f"{lab.verdict} {show(lab.correctness)}+{show(lab.performance)}{flagged}"


def refused_listed(out: Path) -> dict[str, str]:
    """The folders the grader refused (refused-folders.json; names as shown() writes them): name -> why."""
    try:
        data = json.loads((out / REFUSED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(item.get("name")): str(item.get("why")) for item in data
            if isinstance(item, dict) and item.get("refused")} if isinstance(data, list) else {}


def check_refused(name: str, words: str, record, in_gradebook: bool, listed: dict[str, str]) -> Check:
    """A folder to refuse: no record, no gradebook row, and listed with a reason that holds `words`."""
    why = listed.get(shown(name))
    problems = (["a record"] if record is not None else []) + (["a gradebook row"] if in_gradebook else [])
    if why is None or words not in why:
        problems.append(f"{REFUSED_FILE} lists it with {why!r}, not a reason naming {words!r}" if why is not None
                        else f"not in {REFUSED_FILE}")
    return Check(f"{shown(name)} refused", not problems, "; ".join(problems) or f"refused: {why}", name,
                 "refused" if not problems else "not refused")


def check_real_name(out: Path, name: str) -> Check:
    """The student's real name (as the class folder spells it) in junit.xml, its Gradescope
    results.json and its page of the class report, wherever its files are."""
    problems = []
    try:
        suites = {suite.get("name") for suite in ET.parse(out / "junit.xml").getroot().iter("testsuite")}
    except (OSError, ET.ParseError):
        suites = set()
    if name not in suites:
        problems.append("no junit.xml testsuite of that name")
    results = out / "gradescope" / student_file_name(name) / "results.json"
    try:
        student = json.loads(results.read_text(encoding="utf-8")).get("extra_data", {}).get("student")
    except (OSError, ValueError, AttributeError):
        student = None
    if student != name:
        problems.append(f"gradescope/{student_file_name(name)}/results.json names {student!r}")
    page = out / "report" / "students" / f"{student_file_name(name)}.html"
    if not page.is_file() or name not in html.unescape(page.read_text(encoding="utf-8")):
        problems.append(f"report/students/{student_file_name(name)}.html does not show it")
    return Check(f"{shown(name)} real name", not problems, "; ".join(problems) or "in junit, Gradescope and the report",
                 name)


def check_student(name: str, expected: dict, record: Record, cpu_only: bool) -> list[Check]:
    checks = []
    total, not_run = 0.0, False
    for folder, entry in expected.items():
        accepted = entry["without_gpu"] if cpu_only else entry["accept"]
        lab = record.labs.get(folder)
        ok = lab is not None and any(accepts(outcome, lab) for outcome in accepted)
        quiet = ok and lab.verdict == "MISSING" and entry.get("why") == "not handed in"
        checks.append(Check(f"{shown(name)} {folder}", ok,
                            f"got {got(lab, flags=True)}; accepts {' or '.join(map(describe, accepted))}",
                            name, "" if quiet else f"{folder[:2]} {got(lab)}"))
        if lab is not None:
            not_run |= lab.verdict == "NOT_RUN" or lab.total is None
            total += lab.total or 0.0
    want = None if not_run else round(total, 2)
    ok = (record.total is None) if want is None else (record.total is not None and abs(record.total - want) < TOLERANCE)
    checks.append(Check(f"{shown(name)} total", ok, f"got {record.total}; the sum of its labs is {want}", name,
                        f"total {'-' if record.total is None else f'{record.total:g}'}"))
    return checks


def check_gradebook_row(name: str, row: list[str], header: list[str], record: Record) -> Check:
    problems = []
    for column, cell in zip(header[1:], row[1:]):
        column = column.split(" ", 1)[0]  # the lab's folder; a bonus lab's column adds words after it
        value = number(cell)
        want = record.total if column == "total" else (record.labs[column].total if column in record.labs else None)
        if (value is None) != (want is None) or (value is not None and abs(value - want) >= TOLERANCE):
            problems.append(f"{column}={cell!r} (record: {want})")
    return Check(f"{shown(name)} gradebook row", not problems, "; ".join(problems) or "as in the record", name)


# ---------------------------------------------------------------------------------------------
# Secrets


def region_lines(text: str) -> list[str]:
    match = re.search(r"BEGIN STUDENT CODE[^\n]*\n(.*?)\n[^\n]*END STUDENT CODE", text, re.S)
    return [line.strip() for line in (match.group(1) if match else "").splitlines()]


def file_lines(paths) -> set[str]:
    lines = set()
    for path in paths:
        if path.is_file() and not path.is_symlink():
            lines.update(line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return lines


def solution_lines() -> set[str]:
    """Lines of the reference solutions' regions that appear nowhere a student may see them
    (skeletons, common headers) and are long enough to be distinctive."""
    public = file_lines(p for folder in ("labs", "common") for p in (REPO / folder).rglob("*"))
    lines = set()
    for path in (REPO / "solutions").rglob("*"):
        if path.suffix in (".cu", ".cpp") and path.is_file():
            lines.update(region_lines(path.read_text(encoding="utf-8", errors="replace")))
    return {line for line in lines - public if len(line) >= MIN_SECRET_LINE}


def own_lines(class_dir: Path, name: str) -> set[str]:
    """What the student handed in (never through a link): its report may quote it."""
    folder = class_dir / name
    if folder.is_symlink() or not folder.is_dir():
        return set()
    files = []
    for root, dirs, names in os.walk(folder):  # os.walk does not follow links to folders
        files += [Path(root) / n for n in names if Path(n).suffix in (".cu", ".cpp", ".cuh", ".h", ".hpp")]
    return file_lines(files)


def strings_of(path: Path) -> str:
    """A report's text as a reader sees it: JSON strings unescaped, XML text and attributes."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        values = []

        def walk(node):
            if isinstance(node, dict):
                for key, value in node.items():
                    values.append(str(key))
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)
            elif node is not None:
                values.append(str(node))
        walk(json.loads(raw))
        return raw + "\n" + "\n".join(values)
    if path.suffix == ".html":   # as a browser shows it: the entities undone (the report escapes every text)
        return raw + "\n" + html.unescape(raw)
    if path.suffix == ".xml":
        root = ET.fromstring(raw)
        return raw + "\n" + "\n".join([*(e.text or "" for e in root.iter()), *(e.tail or "" for e in root.iter()),
                                       *(v for e in root.iter() for v in e.attrib.values())])
    return raw


def report_files(out: Path, names: list[str]) -> list[tuple[Path, str | None]]:
    """(file, student or None for a class-wide file): every file the grader wrote under `out` but its
    work/ folder (spliced sources and modules, never shown to students) and its dot-files (the key, the
    run's plans): the records, Gradescope, the class files, the class report's pages and the figures.
    A student's files are found by student_file_name(); any other per-student file stands for itself
    (a phantom)."""
    by_file = {student_file_name(name): name for name in names}
    files = []
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        relative = path.relative_to(out)
        if not path.is_file() or relative.parts[0] == "work" or any(part.startswith(".") for part in relative.parts):
            continue
        if relative.parts[0] == "students" or relative.parts[:2] in (("report", "students"), ("report", "handouts")):
            # students/<s>.json, and the class report's two pages of each student: the instructor's, the handout
            files.append((path, by_file.get(path.stem, path.stem)))
        elif relative.parts[0] == "gradescope" and len(relative.parts) > 2:
            files.append((path, by_file.get(relative.parts[1], relative.parts[1])))
        else:
            files.append((path, None))
    return files


# ---------------------------------------------------------------------------------------------
# The checks


def class_students(class_dir: Path) -> list[str]:
    """The class folder's students: its folders, links to folders included (a grader may refuse those)."""
    return sorted(entry.name for entry in class_dir.iterdir()
                  if not entry.name.startswith(".") and (entry.is_dir() or entry.is_symlink()))


def leftover_processes(uids: set[int], before: set[str] = frozenset()) -> list[str]:
    """Running processes of `uids`, but those running before the grading started (`before`: their pids)."""
    found = []
    for pid in processes_of(uids):
        if str(pid) in before:
            continue
        try:
            name = Path(f"/proc/{pid}/comm").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        found.append(f"{pid} ({name})")
    return found


def check(class_dir: Path, out: Path, cpu_only: bool, secret: str | None, process_check: bool,
          before: set[str] = frozenset(), key_secret: str | None = None) -> list[Check]:
    expected = json.loads((class_dir / EXPECTED_FILE).read_text(encoding="utf-8"))
    attackers = expected.get("attackers", {})
    names = class_students(class_dir)
    name_set = set(names)
    checks: list[Check] = []

    if sorted(expected["students"]) != names:
        checks.append(Check("class folder", False, f"{EXPECTED_FILE} names {sorted(expected['students'])}, "
                                                   f"the folder holds {names}: write the class again"))

    # Records, read once; a record that does not parse is itself a failure.
    records: dict[str, Record] = {}
    for path in sorted((out / "students").glob("*.json")):
        try:
            record = read_record(path)
        except (ValueError, OSError) as error:
            checks.append(Check(f"record {path.name}", False, f"does not parse: {error}"))
            continue
        records[record.student] = record

    header, rows = read_gradebook(out / "gradebook.csv") if (out / "gradebook.csv").is_file() else ([], [])
    gradebook = {csv_text(row[0]): row for row in rows if row}
    listed = refused_listed(out)
    to_refuse = {name: meta["refused"] for name, meta in attackers.items() if meta.get("refused")}

    # Per student: verdicts, points, total, gradebook row, its real name in every output.
    for name in names:
        record = records.get(name)
        if name in to_refuse:
            checks.append(check_refused(name, to_refuse[name], record, name in gradebook, listed))
            continue
        if record is None:
            checks.append(Check(f"{shown(name)}", False, "no record in students/" + (
                " (but a gradebook row)" if name in gradebook else "") + (
                f" (refused: {listed[shown(name)]})" if shown(name) in listed else ""), name, "no record"))
            continue
        checks += check_student(name, expected["students"].get(name, {}), record, cpu_only)
        if name in gradebook:
            checks.append(check_gradebook_row(name, gradebook[name], header, record))
        else:
            checks.append(Check(f"{shown(name)} gradebook row", False, "no row in gradebook.csv", name))
        checks.append(check_real_name(out, name))
    wrongly = sorted(set(listed) - {shown(name) for name in to_refuse})
    checks.append(Check(f"{REFUSED_FILE}: only the folders to refuse", not wrongly,
                        ", ".join(f"{name!r}: {listed[name]}" for name in wrongly) or f"{len(listed)} refused"))

    # The roster: nothing but the class folder's students, anywhere.
    phantoms = sorted(set(records) - name_set)
    phantoms += [f"gradebook:{row[0]!r}" for row in rows if row and csv_text(row[0]) not in name_set]
    if (out / "gradescope").is_dir():
        file_names = {student_file_name(name) for name in name_set}
        phantoms += [f"gradescope/{p.name}" for p in (out / "gradescope").iterdir() if p.name not in file_names]
    junit = out / "junit.xml"
    if junit.is_file():
        try:
            suites = [suite.get("name") for suite in ET.parse(junit).getroot().iter("testsuite")]
            phantoms += [f"junit:{suite!r}" for suite in suites if suite is not None and suite not in name_set]
        except ET.ParseError as error:
            checks.append(Check("junit.xml", False, f"does not parse: {error}"))
    checks.append(Check("roster: exactly the class folder's students", not phantoms,
                        ", ".join(phantoms) or f"{len(records)} records, {len(rows)} gradebook rows"))

    formulas = [cell for row in rows for cell in row if cell.startswith(FORMULA_STARTS)]
    checks.append(Check("gradebook: no formula cells", not formulas, ", ".join(map(repr, formulas)) or "none"))

    victims = [name for name, meta in attackers.items() if meta.get("victim")]
    if victims:
        bad = [c.what for c in checks if not c.ok and c.student in victims]
        checks.append(Check("victims unchanged: " + ", ".join(victims), not bad, ", ".join(bad) or "as expected"))

    # Reports: parse, size, secrets.
    secrets = solution_lines()
    passwd = {line for line in file_lines([Path("/etc/passwd")]) if len(line) >= 10}
    # A student's report may quote what it handed in: a solution line inside one of its own lines.
    forbidden = {None: secrets}
    for name in names:
        own = own_lines(class_dir, name)
        forbidden[name] = {line for line in secrets if not any(line in mine for mine in own)}
    leaks, broken, big = [], [], []
    for path, student in report_files(out, names):
        limit = STUDENT_REPORT_LIMIT if student is not None else CLASS_REPORT_LIMIT
        if path.stat().st_size > limit:
            big.append(f"{path.relative_to(out)} ({path.stat().st_size} bytes)")
        try:
            text = strings_of(path)
        except (ValueError, ET.ParseError) as error:
            broken.append(f"{path.relative_to(out)}: {error}")
            continue
        if secret and secret in text:
            leaks.append(f"{path.relative_to(out)}: the REDUCTION_TEST_SECRET value")
        if key_secret and key_secret in text:
            leaks.append(f"{path.relative_to(out)}: the key of the grading's session keyring")
        quoted = {line for line in forbidden.get(student, secrets) if line in text}
        if quoted:
            leaks.append(f"{path.relative_to(out)}: {len(quoted)} solution line(s), e.g. {sorted(quoted)[0]!r}")
        if any(line in text for line in passwd):
            leaks.append(f"{path.relative_to(out)}: a line of /etc/passwd")
    checks.append(Check("reports parse", not broken, "; ".join(broken) or "all"))
    checks.append(Check("reports are small", not big, "; ".join(big) or "all under the limits"))
    unchecked = [name for name, value in (("REDUCTION_TEST_SECRET", secret), ("REDUCTION_KEY_SECRET", key_secret))
                 if not value]
    checks.append(Check("reports hold no secret", not leaks, "; ".join(leaks) or
                        "no secret, solution line or /etc/passwd line"
                        + (f" ({' and '.join(unchecked)} not given: not looked for)" if unchecked else "")))

    if process_check:
        # The uids the records say the runs had (another grading on this host may be using the others).
        uids = set().union(*(uids_described(record.sandbox) for record in records.values())) or SANDBOX_UIDS
        named = f"{len(uids)} uids, {min(uids)} to {max(uids)}" if len(uids) > 1 else f"uid {min(uids)}"
        left = leftover_processes(uids, before)
        checks.append(Check(f"no process of the sandbox's uids ({named}) left", not left, ", ".join(left) or "none"))
    return checks


def check_exit_status(class_dir: Path, status: int) -> Check:
    """grade.py ends a class grading that refused a folder with ExitStatus.REFUSED, any other with ExitStatus.OK."""
    expected = json.loads((class_dir / EXPECTED_FILE).read_text(encoding="utf-8"))
    refusing = any(meta.get("refused") for meta in expected.get("attackers", {}).values())
    want = ExitStatus.REFUSED if refusing else ExitStatus.OK
    return Check("grade.py's exit status", status == want, f"{status}; {want.value} for a class "
                 + ("with folders to refuse" if refusing else "with nothing to refuse"))


def gpu_here() -> bool:
    """Whether this machine has a GPU, asked as the grader asks first (`nvidia-smi -L`)."""
    if not shutil.which("nvidia-smi"):
        return False
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def unchecked_without_gpu(out: Path) -> str:
    """What a check without a GPU leaves open: the labs the grading could not run."""
    not_run = 0
    for path in (out / "students").glob("*.json"):
        try:
            not_run += sum(lab.verdict == "NOT_RUN" for lab in read_record(path).labs.values())
        except (ValueError, OSError):
            continue   # a record that does not parse is a failed check already
    return (f"graded without a GPU: {not_run} GPU labs NOT_RUN, as they must be; their verdicts, points "
            "and timings on a GPU are not checked here")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("class_dir", type=Path, nargs="?", help="the class folder (with expected_verdicts.json)")
    parser.add_argument("out", type=Path, nargs="?", help="the grader's output folder for it")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--cpu-only", action="store_true",
                      help="graded without a GPU: check what a machine without a GPU must give")
    mode.add_argument("--detect-gpu", action="store_true",
                      help="--cpu-only when nvidia-smi finds no GPU on this machine (grade and check on the same one)")
    parser.add_argument("--secret", default=os.environ.get("REDUCTION_TEST_SECRET"),
                        help="the grader's REDUCTION_TEST_SECRET value (default: this environment's)")
    parser.add_argument("--key-secret", default=os.environ.get("REDUCTION_KEY_SECRET"),
                        help="the key's value in the grading's session keyring (default: this environment's "
                             "REDUCTION_KEY_SECRET)")
    parser.add_argument("--running-before", default="",
                        help="pids (comma-separated) of the sandbox uids' processes from before the grading: "
                             "not left over (--sandbox-pids prints them)")
    parser.add_argument("--no-process-check", action="store_true",
                        help="do not look for leftover processes (checking a grading made elsewhere)")
    parser.add_argument("--exit-status", type=int, help="grade.py's exit status for this grading: 6 when a folder "
                        "was to be refused, else 0")
    parser.add_argument("--sandbox-pids", action="store_true",
                        help="only print the pids of the sandbox uids' running processes, comma-separated")
    args = parser.parse_args(argv)
    if args.sandbox_pids:
        print(",".join(map(str, processes_of(SANDBOX_UIDS))))
        return 0
    if args.class_dir is None or args.out is None:
        parser.error("CLASS_DIR and OUT_DIR are needed")
    if not (args.class_dir / EXPECTED_FILE).is_file():
        parser.error(f"{args.class_dir} has no {EXPECTED_FILE}: write the class with examples/make_examples.py")
    if not args.out.is_dir():
        parser.error(f"{args.out}: no such folder")
    before = {pid for pid in args.running_before.split(",") if pid}
    cpu_only = args.cpu_only or (args.detect_gpu and not gpu_here())
    checks = check(args.class_dir, args.out, cpu_only, args.secret, not args.no_process_check, before, args.key_secret)
    if args.exit_status is not None:
        checks.append(check_exit_status(args.class_dir, args.exit_status))
    print_report(checks, unchecked_without_gpu(args.out) if cpu_only else "")
    return 1 if any(not c.ok for c in checks) else 0


def print_report(checks: list[Check], unchecked: str = "") -> None:
    """One line per student (the labs it handed in, as graded), the class-level invariants, then every
    failed check in full, last, where a log's tail (CI keeps only that) still shows it; the count last
    of all, with what was not checked (`unchecked`)."""
    students = list(dict.fromkeys(c.student for c in checks if c.student is not None))
    columns = max([width(shown(name)) for name in students] + [7])   # a CJK character takes two
    print(f"{padded('student', columns)}  ok    what the grader gave (verdict correctness+performance)")
    for name in students:
        own = [c for c in checks if c.student == name]
        cells = ", ".join(c.shown for c in own if c.shown)
        print(f"{padded(shown(name), columns)}  {'ok  ' if all(c.ok for c in own) else 'FAIL'}  {cells}")
    print("\nClass-level:")
    for c in (c for c in checks if c.student is None):
        print(f"  {'ok  ' if c.ok else 'FAIL'}  {c.what}: {c.detail}")
    failures = [c for c in checks if not c.ok]
    if failures:
        print("\nFailed checks:")
        for c in failures:
            print(f"  {c.what}: {c.detail}")
    print(f"\n{len(checks) - len(failures)} of {len(checks)} checks hold" + (f"; {len(failures)} FAILED" if failures else "")
          + (f" ({unchecked})" if unchecked else ""))

if __name__ == "__main__":
    sys.exit(main())
