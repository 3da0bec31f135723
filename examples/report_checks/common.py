"""What every part of the report's check shares: the list of results, the grading's own files read
back (gradebook.csv, the records), and the grader's modules (its flag rules and file names)."""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "grading"))
sys.path.insert(0, str(REPO / "plots"))

from grader.judge.lab_flags import missing_flags  # noqa: E402,F401
from grader.outputs.records import StudentRecord  # noqa: E402
from grader.judge.verdicts import LETTERS, VERDICTS  # noqa: E402,F401  (LETTERS: for the page checks)
from class_files.csv_cells import csv_text as csv_name  # noqa: E402  (gradebook.csv's formula-safe name cells)
from grader.report.site.paths import handout_path, student_page_path  # noqa: E402,F401

ORDER = list(VERDICTS)   # the verdicts' order, as a lab column sorts (contract.json "verdicts")


@dataclass
class Checks:
    results: list[tuple[bool, str]] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> bool:
        self.results.append((bool(ok), what))
        return bool(ok)




@dataclass
class Grading:
    """One grading's OUT, read back: the gradebook's rows and the signed records of its students."""
    out: Path
    header: list[str]
    rows: list[list[str]]
    names: list[str]
    records: dict[str, StudentRecord]
    raw: dict[str, dict]            # the records as JSON (a record graded before flags has no "flags" key)
    refused: list[dict]

    @property
    def site(self) -> Path:
        return self.out / "report"


def read_grading(out: Path) -> Grading:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    names = [csv_name(row[0]) for row in rows[1:]]
    raw = {}
    for path in sorted((out / "students").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("student") in names and data.get("complete"):
            raw[data["student"]] = data
    refused_file = out / "refused-folders.json"
    refused = json.loads(refused_file.read_text(encoding="utf-8")) if refused_file.is_file() else []
    refused = [item for item in refused if item.get("refused", True)]   # not the entries it only ignored (files, .git)
    return Grading(out, rows[0], rows[1:], names, {n: StudentRecord.from_json(d) for n, d in raw.items()}, raw,
                   refused)


def js_rows(driver, selector: str, cell_script: str) -> list:
    """For each element of `selector`, what `cell_script` (a function of r) returns."""
    return driver.execute_script(f"return Array.from(document.querySelectorAll({json.dumps(selector)}), "
                                 f"r => {cell_script});")
