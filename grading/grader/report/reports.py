"""The grader's outputs, all rebuilt from the per-student JSON files after every student:

  OUT/students/<name>.json        everything about one student (the source of truth)
  OUT/gradebook.csv               student,01_host_sum,...,total (LMS import; blank = not graded)
  OUT/timings.csv                 benchmark rows in long format (plots/reduction_plots.py input)
  OUT/junit.xml                   one testsuite per student, one testcase per lab
  OUT/gradescope/<name>/results.json
  (and the class report, OUT/report/: report/site/, written beside these by class_outputs.py)

<name> is the student's file name (student_paths.py): the folder name, other bytes than
[A-Za-z0-9._-] written %XX, so that no two students share a file.
Every file is written to a temporary file and renamed into place, so a crash never leaves a
half-written file and a rerun resumes from the complete per-student files.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

from class_files.csv_cells import csv_cell
from class_files.timings_columns import BASELINE, COLUMNS as TIMINGS_COLUMNS, REFERENCE

from ..judge.sanitizer_findings import FINDINGS
from ..judge.verdicts import (COMPILE_ERROR, HAZARD_MARK, LEGEND, LETTERS, MISSING, NOT_RUN, PASSED,
                              REFUSED_TIME_MARK, RUNTIME_ERROR, TIMEOUT)
from ..manifest import Lab
from ..outputs.atomic_files import write_atomic, write_json
from ..outputs.record_store import RecordStore
from ..outputs.records import UNSANDBOXED, LabRecord, StudentRecord
from ..outputs.records import unsandboxed as is_unsandboxed
from ..outputs.student_names import padded, shown, width
from ..outputs.student_paths import gradescope_folder

SHARED_OWNERS = (REFERENCE, BASELINE)  # rows every student's benchmark run measures again


def format_points(value) -> str:
    if value is None:
        return ""
    return f"{value:.2f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------------------------------------
# gradebook.csv


def unsandboxed(record: StudentRecord) -> bool:
    return is_unsandboxed(record.sandbox)


BONUS_SUFFIX = " (bonus)"  # after a bonus lab's name in the gradebook header, Gradescope and the summary


def bonus_folders(records: list[StudentRecord]) -> set[str]:
    """The labs the records scored as bonus labs (the policy of their grading said so)."""
    return {folder for record in records for folder, entry in record.labs.items() if entry.score.bonus}


def graded_labs(records: list[StudentRecord], labs: list[Lab]) -> list[Lab]:
    """The class files' lab columns: the labs any record graded (all of them when none did)."""
    graded = {folder for record in records for folder in record.labs}
    return [lab for lab in labs if lab.folder in graded] or list(labs)


def class_sandbox(records: list[StudentRecord]) -> str:
    """The class is as sandboxed as its least sandboxed record."""
    return next((record.sandbox for record in records if unsandboxed(record)), records[0].sandbox if records else "")


def max_total_text(record: StudentRecord) -> str:
    """'190', or '190 + bonus (11_single_pass)' when the record has bonus labs."""
    bonus = [folder for folder, entry in record.labs.items() if entry.score.bonus]
    return format_points(record.max_total) + (f" + bonus ({', '.join(bonus)})" if bonus else "")


def gradebook_csv(records: list[StudentRecord], labs: list[Lab], names: list[str]) -> str:
    """One row for every student of the class folder, in its order; blank where not graded yet. A
    student graded without the sandbox gets a last "sandbox" column saying so (not signable). A
    bonus lab's column says "(bonus)" after its name; the total includes its points."""
    by_name = {record.student: record for record in records}
    flagged = any(unsandboxed(record) for record in records)
    bonus = bonus_folders(records)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *[lab.folder + (BONUS_SUFFIX if lab.folder in bonus else "") for lab in labs], "total"]
                    + (["sandbox"] if flagged else []))
    for name in names:
        record = by_name.get(name)
        cells = []
        for lab in labs:
            entry = record.labs.get(lab.folder) if record else None
            cells.append(format_points(entry.score.total) if entry else "")
        note = ([record.sandbox if record and unsandboxed(record) else ""] if flagged else [])
        writer.writerow([csv_cell(name), *cells, format_points(record.total) if record else "", *map(csv_cell, note)])
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# timings.csv


def _verdict_rows(record: StudentRecord) -> list[dict]:
    """Rows naming the verdict of each lab that was not timed, at the benchmark's sizes and types,
    so the plots show a failed or not-run lab where its point would be (MISSING labs get no row)."""
    rows = []
    timed = {row["lab"] for row in record.timings if row["student"] == record.student}
    for folder, entry in record.labs.items():
        if folder in timed or entry.verdict in (PASSED, MISSING):
            continue
        info = record.benchmark
        for dtype in info.types:
            for n in info.host_sizes_n if folder in info.host_labs else info.sizes_n:
                rows.append({"student": record.student, "lab": folder, "type": dtype, "n": str(n),
                             "status": entry.verdict, "gpu": record.gpu_name, "date": record.date})
    return rows


def _middle_row(rows: list[dict]) -> dict:
    """Of the same reference measured in several students' runs, the run with the median time."""
    def key(row):
        try:
            return float(row.get("median_us") or "inf")
        except ValueError:
            return float("inf")
    ordered = sorted(rows, key=key)
    return ordered[(len(ordered) - 1) // 2]


def timings_csv(records: list[StudentRecord]) -> str:
    student_rows, shared = [], {}
    for record in records:
        for row in record.timings:
            if row["student"] in SHARED_OWNERS:
                shared.setdefault((row["student"], row["lab"], row["type"], row["n"]), []).append(row)
            else:
                student_rows.append(row)
        student_rows += _verdict_rows(record)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, TIMINGS_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    seen = set()
    for row in student_rows:
        key = (row["student"], row["lab"], row["type"], row["n"])
        if key not in seen:
            seen.add(key)
            writer.writerow({column: csv_cell(row.get(column, "")) for column in TIMINGS_COLUMNS})
    for key in sorted(shared, key=lambda k: (k[0] != "reference", k[1], k[2], int(k[3]))):
        writer.writerow({column: _middle_row(shared[key]).get(column, "") for column in TIMINGS_COLUMNS})
    return buffer.getvalue()


def timings_sidecar(records: list[StudentRecord]) -> dict | None:
    """timings.json next to timings.csv: the device and date the plots put in their titles, and how
    the student code was confined."""
    for record in records:
        if record.benchmark.device:
            return {"tool": "reduction-labs grader", "device": record.benchmark.device, "date": record.date,
                    "sandbox": record.sandbox}
    return None


# ---------------------------------------------------------------------------------------------
# junit.xml


def _lab_message(entry: LabRecord) -> str:
    lines = [f"{entry.verdict}: {entry.detail}".rstrip(": ")]
    lines += entry.score.notes
    if entry.compile.output and entry.verdict == COMPILE_ERROR:
        lines.append("compiler output:\n" + entry.compile.output)
    for finding in entry.sanitizer.findings:
        if finding["status"] in FINDINGS:
            lines.append(f"{finding['tool']}: {finding['count']} finding(s) {finding['note']}".rstrip()
                         + ("\n  " + "\n  ".join(finding["report"]) if finding["report"] else ""))
    lines += entry.notes
    if entry.tests.program_output:
        lines.append("program output (what your code printed during its tests):\n" + entry.tests.program_output)
    return "\n".join(lines)


def junit_xml(records: list[StudentRecord]) -> str:
    root = ET.Element("testsuites", name="reduction-labs grading")
    for record in records:
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        suite = ET.SubElement(root, "testsuite", name=record.student, tests=str(len(record.labs)))
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="sandbox", value=record.sandbox)
        ET.SubElement(properties, "property", name="seed", value=record.seed)
        for folder, entry in record.labs.items():
            seconds = entry.tests.seconds + entry.compile.seconds
            case = ET.SubElement(suite, "testcase", classname=f"reduction-labs.{record.student}", name=folder,
                                 time=f"{seconds:.3f}")
            message = _lab_message(entry)
            if entry.verdict == PASSED:
                ET.SubElement(case, "system-out").text = message
            elif entry.verdict == NOT_RUN:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{NOT_RUN}: no GPU on this machine").text = message
            elif entry.verdict in (COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT):
                counts["errors"] += 1
                ET.SubElement(case, "error", message=entry.verdict, type=entry.verdict).text = message
            else:
                counts["failures"] += 1
                ET.SubElement(case, "failure", message=entry.verdict, type=entry.verdict).text = message
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------------------
# Gradescope


def leaderboard_entries(record: StudentRecord) -> list[dict]:
    """Gradescope's leaderboard quantities: per lab that passed with a usable timing, its time /
    the reference's (LabRecord.benchmark.ratio, the ratio its performance points come from), lower
    first. A lab without one (failed, not run, no timing, below the read roof) has no entry: a
    made-up value would rank it."""
    return [{"name": f"{folder} time / reference", "value": round(entry.benchmark.ratio, 3), "order": "asc"}
            for folder, entry in record.labs.items()
            if entry.verdict == PASSED and entry.benchmark.ratio is not None and not entry.benchmark.time_refused]


def gradescope_results(record: StudentRecord, leaderboard: bool = False) -> dict:
    """Gradescope's results.json. A lab not run (no GPU) gets no status and no score, and says so:
    Gradescope knows only "passed" and "failed", and it was neither. With `leaderboard` (policy
    [gradescope] leaderboard) it carries the student's leaderboard_entries().

    An incomplete grading (a lab not run, so a blank total) carries no score at all, neither the
    total nor any lab's: Gradescope takes the file's "score", or, without one, the sum of its tests'
    scores, so even one lab's points would upload as the grade (10 of 190). Its spec wants a score
    on the file or on every test: this file gives it none to record. Its output says why, and each
    graded lab's output the points it earned."""
    incomplete = record.total is None or any(entry.verdict == NOT_RUN for entry in record.labs.values())
    tests = []
    for folder, entry in record.labs.items():
        name = folder + (BONUS_SUFFIX if entry.score.bonus else "")
        test = {"name": name, "max_score": entry.score.max, "output": _lab_message(entry)}
        if entry.verdict == NOT_RUN:
            test["name"] = f"{name} (not run: no GPU on the grading machine)"
        else:
            test["status"] = "passed" if entry.verdict == PASSED else "failed"
        if entry.score.total is not None and incomplete:
            test["output"] = (f"{format_points(entry.score.total)} of {format_points(entry.score.max)} points "
                              "(not a score: this grading is incomplete)\n" + test["output"])
        elif entry.score.total is not None:
            test["score"] = entry.score.total
        tests.append(test)
    not_run = [folder for folder, entry in record.labs.items() if entry.verdict == NOT_RUN]
    if incomplete:
        known = sum(entry.score.total or 0.0 for entry in record.labs.values())
        output = [f"NOT A GRADE: this grading is incomplete and carries no score (points so far: "
                  f"{format_points(known)} / {max_total_text(record)}). Grade again on a machine with a GPU "
                  "before uploading."]
    else:
        output = [f"Total: {format_points(record.total)} / {max_total_text(record)}"]
    if any(entry.score.bonus for entry in record.labs.values()):
        output.append("Bonus labs' points are in the total but not in the maximum: they come on top.")
    if not_run:
        output.append(f"Not run (no GPU on the grading machine): {', '.join(not_run)}. These labs are not graded yet.")
    if unsandboxed(record):
        output.append(f"Graded {record.sandbox}: not a grading to sign.")
    output += record.notes
    if record.benchmark.program_output:
        output.append("program output of your timing run:\n" + record.benchmark.program_output)
    # The student's name, as the class folder spells it: the folder's name is its file name, which a
    # long name turns into a hash (student_paths.py). extra_data is Gradescope's field for such data.
    results = {"output": "\n".join(output), "visibility": "visible", "tests": tests,
               "extra_data": {"student": record.student}}
    if not incomplete:
        results["score"] = record.total
    if leaderboard:
        results["leaderboard"] = leaderboard_entries(record)
    return results


# ---------------------------------------------------------------------------------------------
# the summary table


def summary_table(records: list[StudentRecord], labs: list[Lab]) -> str:
    """The console's table: a line per student, its name as shown() writes it and padded to the
    columns it takes on a terminal (a CJK character takes two)."""
    name_width = max([len("student")] + [width(shown(r.student)) for r in records])
    bonus = bonus_folders(records)
    header = f"{'student':<{name_width}}  " + " ".join(
        f"{lab.folder[:2] + ('+' if lab.folder in bonus else ''):>3}" for lab in labs) + "   total"
    lines = [header, "-" * len(header)]
    for record in records:
        cells = []
        for lab in labs:
            entry = record.labs.get(lab.folder)
            if entry is None:
                cells.append(f"{'':>3}")
                continue
            letter = LETTERS.get(entry.verdict, "?")
            if entry.sanitizer.hazards:
                letter += HAZARD_MARK
            elif entry.benchmark.time_refused:
                letter += REFUSED_TIME_MARK
            cells.append(f"{letter:>3}")
        total_text = (f"{format_points(record.total)}/{format_points(record.max_total)}" if record.total is not None
                      else "n/a")
        lines.append(f"{padded(shown(record.student), name_width)}  " + " ".join(cells) + f"   {total_text}")
    lines.append(LEGEND)
    if bonus:
        lines.append("NN+ a bonus lab: its points are in the total, not in the maximum after the slash")
    return "\n".join(lines)


def write_class_outputs(out: Path, labs: list[Lab], names: list[str], key: bytes,
                        sandbox: str = "", leaderboard: bool = False, store: RecordStore | None = None,
                        only: set[str] | None = None) -> list[StudentRecord]:
    """Rebuilds gradebook, timings, junit and Gradescope files from the signed, complete records of
    the class folder's students (`names`): nothing else in OUT/students is ever read into them.
    `leaderboard`: the policy's [gradescope] leaderboard (Gradescope leaderboard entries). `store`:
    the grading's own (it keeps the records it has read), else a new one. `only`: the students
    whose Gradescope file can have changed (each is made from its own record alone), else all."""
    out = Path(out)
    records = (store or RecordStore(out, key)).complete(names)
    columns = graded_labs(records, labs)
    write_atomic(out / "gradebook.csv", gradebook_csv(records, columns, names))
    write_atomic(out / "timings.csv", timings_csv(records))
    sidecar = timings_sidecar(records)
    if sidecar:
        write_json(out / "timings.json", sidecar)
    write_atomic(out / "junit.xml", junit_xml(records))
    if is_unsandboxed(sandbox):
        write_atomic(out / f"{UNSANDBOXED}.txt", f"This grading ran student code {sandbox}.\nIts outputs are not a "
                                               "gradebook to sign: see docs/grading-security.md.\n")
    for record in records:
        if only is None or record.student in only:
            write_json(gradescope_folder(out, record.student) / "results.json", gradescope_results(record, leaderboard))
    return records
