#!/usr/bin/env python3
"""The class report of a real GPU grading, checked in a browser: the records in
fixtures/h100_example_class (four students of the example class, graded on an NVIDIA H100 on
2026-11-25, signed with the key beside them) are copied into a fresh OUT, the class outputs, the
figures and the report are written from them as a grading's end writes them (class_outputs.py),
and examples/check_report.py checks the report.

    python3 grading/grader_tests/report_fixture.py [--keep DIR]

Exit status: check_report.py's (0, 1, or the skip code when no browser is here).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

GRADING = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(GRADING))
sys.path.insert(0, str(GRADING.parent / "examples"))

from grader.report import class_outputs
from grader.outputs import signing  # noqa: E402
from grader.manifest import Lab  # noqa: E402
from grader.outputs.record_store import RecordStore  # noqa: E402
import check_report  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h100_example_class"
NAMES = ["alice", "carol", "dave", "frank"]


def build(out: Path) -> list:
    shutil.copytree(FIXTURE / "students", out / "students")
    shutil.copyfile(FIXTURE / "grader-key", out / signing.KEY_FILE)
    key = signing.load_key(out)
    records = RecordStore(out, key).complete(NAMES)
    if [record.student for record in records] != NAMES:
        raise SystemExit(f"error: the fixture's signed records are {[r.student for r in records]}, not {NAMES}")
    labs = [Lab(folder, entry.file, entry.module) for folder, entry in records[0].labs.items()]
    records = class_outputs.publish(out, labs, NAMES, key, records[0].sandbox)
    print(class_outputs.finish(out, labs, NAMES, records))
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the OUT here (emptied first) and leave it")
    args = parser.parse_args()
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
        args.keep.mkdir(parents=True)
        build(args.keep)
        return check_report.main([str(args.keep)])
    with tempfile.TemporaryDirectory(prefix="report-fixture-") as folder:
        build(Path(folder))
        return check_report.main([folder])


if __name__ == "__main__":
    sys.exit(main())
