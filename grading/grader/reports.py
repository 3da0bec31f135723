"""The grader's outputs, all rebuilt from the per-student JSON files after every student:

  OUT/students/<student>.json     everything about one student (the source of truth)
  OUT/gradebook.csv               student,01_host_sum,...,total (LMS import; blank = not graded)
  OUT/timings.csv                 benchmark rows in long format (plots/reduction_plots.py input)
  OUT/junit.xml                   one testsuite per student, one testcase per lab
  OUT/gradescope/<student>/results.json

Every file is written to a temporary file and renamed into place, so a crash never leaves a
half-written file and a rerun resumes from the complete per-student files.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from .manifest import Lab
from .verdicts import COMPILE_ERROR, LETTERS, MISSING, NOT_RUN, PASSED, RUNTIME_ERROR, TIMEOUT

TIMINGS_COLUMNS = ["student", "lab", "type", "n", "median_us", "min_us", "iqr_us", "gbps", "pct_roof",
                   "ref_median_us", "ratio_to_ref", "status", "gpu", "date"]
SHARED_OWNERS = ("reference", "baseline")  # rows every student's benchmark run measures again


def write_atomic(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def write_json(path: Path, data) -> None:
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def student_json_path(out: Path, student: str) -> Path:
    return Path(out) / "students" / f"{student}.json"


def load_records(out: Path) -> list[dict]:
    """The complete per-student records in OUT/students, by student name."""
    records = []
    folder = Path(out) / "students"
    if not folder.is_dir():
        return records
    for path in sorted(folder.glob("*.json")):
        # a student being regraded (or cut short while regraded) counts with the earlier grading
        for candidate in (path, path.with_name(path.name + ".previous")):
            try:
                record = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and record.get("complete"):
                records.append(record)
                break
    return sorted(records, key=lambda r: r["student"])


def format_points(value) -> str:
    if value is None:
        return ""
    return f"{value:.2f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------------------------------------
# gradebook.csv


def gradebook_csv(records: list[dict], labs: list[Lab]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *[lab.folder for lab in labs], "total"])
    for record in records:
        cells = []
        for lab in labs:
            entry = record["labs"].get(lab.folder)
            cells.append(format_points(entry["score"]["total"]) if entry else "")
        writer.writerow([record["student"], *cells, format_points(record.get("total"))])
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# timings.csv


def _verdict_rows(record: dict, benchmark: dict) -> list[dict]:
    """Rows naming the verdict of each lab that was not timed, at the benchmark's sizes and types,
    so the plots show a failed run where its point would be (MISSING labs get no row)."""
    rows = []
    timed = {row["lab"] for row in record.get("timings", []) if row["student"] == record["student"]}
    for folder, entry in record["labs"].items():
        verdict = entry["verdict"]
        if folder in timed or verdict in (PASSED, MISSING):
            continue
        for dtype in benchmark.get("types", []):
            for n in benchmark.get("sizes_n", []):
                rows.append({"student": record["student"], "lab": folder, "type": dtype, "n": str(n),
                             "status": verdict, "gpu": record.get("gpu_name", ""), "date": record.get("date", "")})
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


def timings_csv(records: list[dict]) -> str:
    student_rows, shared = [], {}
    for record in records:
        for row in record.get("timings", []):
            if row["student"] in SHARED_OWNERS:
                shared.setdefault((row["student"], row["lab"], row["type"], row["n"]), []).append(row)
            else:
                student_rows.append(row)
        student_rows += _verdict_rows(record, record.get("benchmark", {}))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, TIMINGS_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    seen = set()
    for row in student_rows:
        key = (row["student"], row["lab"], row["type"], row["n"])
        if key not in seen:
            seen.add(key)
            writer.writerow({column: row.get(column, "") for column in TIMINGS_COLUMNS})
    for key in sorted(shared, key=lambda k: (k[0] != "reference", k[1], k[2], int(k[3]))):
        writer.writerow({column: _middle_row(shared[key]).get(column, "") for column in TIMINGS_COLUMNS})
    return buffer.getvalue()


def timings_sidecar(records: list[dict]) -> dict | None:
    """timings.json next to timings.csv: the device and date the plots put in their titles."""
    for record in records:
        device = record.get("benchmark", {}).get("device")
        if device:
            return {"tool": "reduction-labs grader", "device": device, "date": record.get("date", "")}
    return None


# ---------------------------------------------------------------------------------------------
# junit.xml


def _lab_message(entry: dict) -> str:
    lines = [f"{entry['verdict']}: {entry.get('detail', '')}".rstrip(": ")]
    for note in entry["score"].get("notes", []):
        lines.append(note)
    if entry.get("compile", {}).get("output") and entry["verdict"] == COMPILE_ERROR:
        lines.append("compiler output:\n" + entry["compile"]["output"])
    for finding in entry.get("sanitizer", {}).get("findings", []):
        if finding["status"] == "hazards":
            lines.append(f"{finding['tool']}: {finding['count']} hazard(s)\n  " + "\n  ".join(finding["report"]))
    for note in entry.get("notes", []):
        lines.append(note)
    return "\n".join(lines)


def junit_xml(records: list[dict]) -> str:
    root = ET.Element("testsuites", name="reduction-labs grading")
    for record in records:
        labs = record["labs"]
        counts = {"failures": 0, "errors": 0, "skipped": 0}
        suite = ET.SubElement(root, "testsuite", name=record["student"], tests=str(len(labs)))
        for folder, entry in labs.items():
            seconds = entry.get("tests", {}).get("seconds", 0.0) + entry.get("compile", {}).get("seconds", 0.0)
            case = ET.SubElement(suite, "testcase", classname=f"reduction-labs.{record['student']}", name=folder,
                                 time=f"{seconds:.3f}")
            verdict = entry["verdict"]
            message = _lab_message(entry)
            if verdict == PASSED:
                ET.SubElement(case, "system-out").text = message
            elif verdict == NOT_RUN:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{NOT_RUN}: no GPU on this machine").text = message
            elif verdict in (COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT):
                counts["errors"] += 1
                ET.SubElement(case, "error", message=verdict, type=verdict).text = message
            else:
                counts["failures"] += 1
                ET.SubElement(case, "failure", message=verdict, type=verdict).text = message
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------------------
# Gradescope


def gradescope_results(record: dict) -> dict:
    tests = []
    for folder, entry in record["labs"].items():
        score = entry["score"]
        test = {"name": f"{folder}", "max_score": score["max"], "output": _lab_message(entry),
                "status": "passed" if entry["verdict"] == PASSED else "failed"}
        if score["total"] is not None:
            test["score"] = score["total"]
        tests.append(test)
    total = record.get("total")
    known = sum(t.get("score", 0.0) for t in tests)
    output = [f"Total: {format_points(total) if total is not None else format_points(known) + ' (incomplete)'}"
              f" / {format_points(record.get('max_total'))}"]
    output += record.get("notes", [])
    if record.get("ignored"):
        output.append("Ignored files (not graded): " + ", ".join(record["ignored"][:20]))
    return {"score": total if total is not None else known, "output": "\n".join(output),
            "visibility": "visible", "tests": tests}


# ---------------------------------------------------------------------------------------------
# the summary table


def summary_table(records: list[dict], labs: list[Lab]) -> str:
    name_width = max([len("student")] + [len(r["student"]) for r in records])
    header = f"{'student':<{name_width}}  " + " ".join(f"{lab.folder[:2]:>3}" for lab in labs) + "   total"
    lines = [header, "-" * len(header)]
    for record in records:
        cells = []
        for lab in labs:
            entry = record["labs"].get(lab.folder)
            if entry is None:
                cells.append(f"{'':>3}")
                continue
            letter = LETTERS.get(entry["verdict"], "?")
            if entry.get("sanitizer", {}).get("hazards"):
                letter += "!"
            cells.append(f"{letter:>3}")
        total = record.get("total")
        total_text = (f"{format_points(total)}/{format_points(record.get('max_total'))}" if total is not None
                      else "n/a")
        lines.append(f"{record['student']:<{name_width}}  " + " ".join(cells) + f"   {total_text}")
    lines.append("P passed, W wrong answer, R runtime error, T timeout, C compile error, M missing, "
                 "N not run (no GPU); ! sanitizer hazard")
    return "\n".join(lines)


def write_class_outputs(out: Path, labs: list[Lab]) -> list[dict]:
    """Rebuilds gradebook, timings, junit and Gradescope files from the complete student records."""
    out = Path(out)
    records = load_records(out)
    graded = {folder for record in records for folder in record["labs"]}
    columns = [lab for lab in labs if lab.folder in graded] or list(labs)
    write_atomic(out / "gradebook.csv", gradebook_csv(records, columns))
    write_atomic(out / "timings.csv", timings_csv(records))
    sidecar = timings_sidecar(records)
    if sidecar:
        write_json(out / "timings.json", sidecar)
    write_atomic(out / "junit.xml", junit_xml(records))
    for record in records:
        write_json(out / "gradescope" / record["student"] / "results.json", gradescope_results(record))
    return records
