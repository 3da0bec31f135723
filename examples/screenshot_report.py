#!/usr/bin/env python3
"""Screenshots of a grading's class report (OUT/report/), as docs/ shows them: the class page's top
(needs attention, the class summary) and one student's page (at one lab's section with --lab), in
headless chromium (examples/check_report.py opens it).

    python3 examples/screenshot_report.py OUT_DIR STUDENT [--lab FOLDER] --out docs/images

Writes report-class.png and report-student.png. Exit status: the skip code (grading/contract.json) when no browser is here. The
pictures in docs/ are of the example class graded on an NVIDIA H100 on 2026-11-26
(`bash examples/grade_class.sh example build/solutions`, then this on build/solutions/grading-example
with `dave --lab 06_first_add`); without a GPU, the stored H100 records of 2026-11-25 serve
(grading/grader_tests/report_fixture.py --keep OUT).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_report import SKIPPED, open_browser  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grading"))
from grader.report.site.student_page import student_page_path  # noqa: E402

WINDOW = (1280, 900)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("student")
    parser.add_argument("--lab", help="show the student's page at this lab's section (e.g. 06_first_add)")
    parser.add_argument("--out", dest="images", type=Path, required=True)
    args = parser.parse_args(argv)
    driver, why = open_browser()
    if driver is None:
        print(f"SKIPPED: {why}")
        return SKIPPED
    args.images.mkdir(parents=True, exist_ok=True)
    try:
        driver.set_window_size(*WINDOW)
        pages = {"report-class.png": args.out / "report" / "index.html",
                 "report-student.png": args.out / "report" / student_page_path(args.student)}
        for name, page in pages.items():
            driver.get(page.resolve().as_uri())
            if args.lab and name == "report-student.png":
                driver.execute_script("document.getElementById(arguments[0]).scrollIntoView();", f"lab-{args.lab}")
            driver.save_screenshot(str(args.images / name))
            print(args.images / name)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
