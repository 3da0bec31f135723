#!/usr/bin/env python3
"""Checks a grading's class report (OUT/report/) in a real browser: Debian's chromium, driven by
chromedriver through Selenium (packages chromium, chromium-driver, python3-selenium).

    python3 examples/check_report.py OUT_DIR

OUT_DIR is what grading/grade.py wrote (report/, gradebook.csv, students/*.json). It checks, and
prints as a list (report_checks/ holds each part):
- every page (the class page, each student's page and the copy for the student), on the desktop
  and at 400 px: no console error and only the report's own elements (a script that escaping let
  through would break the page's Content-Security-Policy, which is an error); every link a file
  inside report/ with its anchor; one h1 and headings in order; a title, description and caption
  for every figure; text contrast of WCAG AA; at 400 px no sideways scrolling of the page;
- the class page: "Needs attention" on the first screen with every flag of the run (the records'
  flags, those their fields imply, students not graded, refused folders by name, as text), or
  "None"; the gradebook as gradebook.csv and the records, lab names in its headers; the summary's
  pass rates, means, medians, '!' and '?' and the histogram as the gradebook's cells give them;
  the leaderboard's figure as its tables, ranks and ties as the ratios, every passing lab ranked or
  named; filters by name, verdict, lab and flag; sorting by mouse and by keyboard, a lab column in
  the verdicts' order;
- each student's page: why each failing lab failed, a sandboxed replay command without machine
  paths for each failing verdict, '!' and '?', the sanitizer's cases, the GPU, its figure as its
  table; the student's copy: no link out, no classmate, no machine path, no class seed, the
  student's own replay.

Exit status 0 when every check holds, 1 when one does not, the skip code (grading/contract.json) when no browser is here.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_checks import class_page, interaction, pages, student_pages  # noqa: E402
from report_checks.common import Checks, handout_path, read_grading, student_page_path  # noqa: E402
from grader.contract import SKIP_CODE  # noqa: E402  (report_checks.common put grading/ on the path)

BROWSER, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SKIPPED = SKIP_CODE
# Selenium waits for chromedriver without limit by default: a browser that stops answering (a renderer
# stuck on a loaded machine) would hang the check, and the test, until CTest's timeout. Each command,
# page load and script gets a limit instead, and one that runs out is a failed check that says so.
COMMAND_LIMIT_S, PAGE_LIMIT_S, SCRIPT_LIMIT_S = 120, 60, 30


def open_browser():
    """A headless chromium, or the reason there is none."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, f"Selenium is not installed for {sys.executable} (apt-get install python3-selenium)"
    browser = shutil.which("chromium") or (BROWSER if Path(BROWSER).exists() else None)
    driver = shutil.which("chromedriver") or (DRIVER if Path(DRIVER).exists() else None)
    if not browser or not driver:
        return None, "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    options = Options()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.remote.remote_connection import RemoteConnection
    RemoteConnection.set_timeout(COMMAND_LIMIT_S)
    try:
        chrome = webdriver.Chrome(service=Service(driver), options=options)
        chrome.set_page_load_timeout(PAGE_LIMIT_S)
        chrome.set_script_timeout(SCRIPT_LIMIT_S)
        return chrome, ""
    except WebDriverException as exc:   # installed but cannot start here (no display server is needed: headless)
        return None, f"chromium did not start: {str(exc.msg or exc).strip().splitlines()[0][:300]}"


def check_every_page(driver, grading, checks: Checks, where: str, page: Path, title: str, phone_too: bool = True) -> bool:
    """The checks of every page; False (and a failed check) when there is no such page."""
    if not checks.check(page.is_file(), f"{where}: {page.relative_to(grading.site)} exists"):
        return False
    pages.visit(driver, page, pages.DESKTOP)
    pages.page_is_clean(driver, checks, where, title)
    pages.links_resolve(driver, checks, where, grading.site)
    pages.readable(driver, checks, where)
    if phone_too:
        pages.visit(driver, page, pages.PHONE)
        pages.fits_a_phone(driver, checks, where)
        pages.readable(driver, checks, f"{where} at {pages.PHONE[0]} px")
        pages.visit(driver, page, pages.DESKTOP)
    return True


def guarded(checks: Checks, what: str, check, *args) -> None:
    """A part of the check; one that cannot even run (a page without the elements it reads) fails, saying why."""
    try:
        check(*args)
    except Exception as exc:   # noqa: BLE001 (Selenium's, a missing element's, a value's: all a failed check)
        checks.check(False, f"{what}: could not be checked ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")


def check_class_page(driver, grading, checks: Checks) -> None:
    index = grading.site / "index.html"
    check_every_page(driver, grading, checks, "class page", index, "reduction-labs class report")
    for what, check, args in (("needs attention", class_page.attention, (grading,)),
                              ("gradebook", class_page.gradebook, (grading,)), ("summary", class_page.summary, ()),
                              ("leaderboard", class_page.leaderboard, (grading,)),
                              ("filters", interaction.filters, (grading.names,)),
                              ("sorting", interaction.sorting, (grading.names,))):
        guarded(checks, what, check, driver, *args, checks)


def check_student_pages(driver, grading, checks: Checks) -> None:
    for folder, path_of in (("students", student_page_path), ("handouts", handout_path)):
        found = sorted((grading.site / folder).glob("*.html"))
        checks.check(len(found) == len(grading.records), f"{folder}: a page per graded student ({len(found)} pages, "
                                                         f"{len(grading.records)} records)")
    for name, record in grading.records.items():
        where = f"page of {name!r}"
        if check_every_page(driver, grading, checks, where, grading.site / student_page_path(name),
                            f"{name}: reduction-labs report"):
            heading = driver.execute_script("return document.querySelector('h1').textContent;")
            checks.check(heading == name, f"{where}: the heading is the student's name, as text")
            guarded(checks, where, student_pages.instructor_page, driver, grading, record, checks, where)
        where = f"copy for {name!r}"
        if check_every_page(driver, grading, checks, where, grading.site / handout_path(name),
                            f"{name}: your reduction-labs grading"):
            guarded(checks, where, student_pages.handout, driver, grading, record, checks, where)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if not (args.out / "report" / "index.html").is_file():
        print(f"error: {args.out}/report/index.html does not exist", file=sys.stderr)
        return 1
    driver, why = open_browser()
    if driver is None:
        print(f"SKIPPED: the report is not checked in a browser: {why}")
        return SKIPPED
    checks = Checks()
    try:
        grading = read_grading(args.out)
        check_class_page(driver, grading, checks)
        check_student_pages(driver, grading, checks)
    except Exception as exc:   # noqa: BLE001 (a browser that stopped answering, past its limits above)
        checks.check(False, f"the browser stopped the check ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]})")
    finally:
        try:
            driver.quit()
        except Exception:   # noqa: BLE001 (one that no longer answers: its process ends with ours)
            pass
    failed = [what for ok, what in checks.results if not ok]
    for ok, what in checks.results:
        if ok:
            print(f"ok    {what}")
    for what in failed:   # last, where a cut log still shows them
        print(f"FAIL  {what}")
    print(f"\n{len(checks.results) - len(failed)} of {len(checks.results)} report checks hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
