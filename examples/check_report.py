#!/usr/bin/env python3
"""Checks a grading's class report (OUT/report/) in a real browser: Debian's chromium, driven by
chromedriver through Selenium (packages chromium, chromium-driver, python3-selenium).

    python3 examples/check_report.py OUT_DIR

OUT_DIR is what grading/grade.py wrote (report/, gradebook.csv, students/*.json). It checks, and
prints as a list:
- the class page and every student page load with no error on the browser's console (a script
  that escaping let through would break the page's Content-Security-Policy, which is an error);
- the gradebook has one row per row of gradebook.csv, in its order, each cell's points as the
  csv's and each verdict letter as the student's record says; "not run (no GPU)" where so;
- every link resolves (a file that exists; an anchor that is on its page) and every figure drawn
  is inline; the name filter and the column sort work;
- a student page with a lab that failed shows why (its first failing case, or its detail);
- every graded student's name is shown as its folder spells it (accents, CJK, markup, a formula), as
  text, in the gradebook and as its page's heading;
- every folder not graded (refused-folders.json) is listed by name, as text; a student whose
  output holds markup is shown as text: no page has an element that did not come from the report
  (one script, no img, iframe or style outside the figures) and each title is the report's.

Exit status 0 when every check holds, 1 when one does not, 77 when no browser is here.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plots"))
from plotting.csv_cells import csv_text as csv_name  # noqa: E402  (gradebook.csv's formula-safe name cells)

LETTERS = {"PASSED": "P", "WRONG_ANSWER": "W", "RUNTIME_ERROR": "R", "TIMEOUT": "T", "COMPILE_ERROR": "C",
           "MISSING": "M", "NOT_RUN": "N"}
BROWSER, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SKIPPED = 77


@dataclass
class Checks:
    results: list[tuple[bool, str]] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> bool:
        self.results.append((bool(ok), what))
        return bool(ok)


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
    try:
        return webdriver.Chrome(service=Service(driver), options=options), ""
    except WebDriverException as exc:   # installed but cannot start here (no display server is needed: headless)
        return None, f"chromium did not start: {str(exc.msg or exc).strip().splitlines()[0][:300]}"


def gradebook_rows(out: Path) -> tuple[list[str], list[list[str]]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def records(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted((out / "students").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[data["student"]] = data
    return found


def console_errors(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def page_is_clean(driver, checks: Checks, where: str, title: str) -> None:
    checks.check(not console_errors(driver), f"{where}: no error on the console")
    counts = driver.execute_script(
        "return [document.scripts.length, document.images.length, document.querySelectorAll('iframe,object,embed,"
        "form,base,meta[http-equiv=refresh]').length, document.querySelectorAll('body style').length - "
        "document.querySelectorAll('body svg style').length, document.title];")
    checks.check(counts[:4] == [1, 0, 0, 0] and counts[4] == title,
                 f"{where}: only the report's own elements (scripts, images, frames, styles, title: {counts})")


def links_resolve(driver, checks: Checks, where: str) -> None:
    broken = []
    for link in driver.execute_script("return Array.from(document.links, a => a.href);"):
        parsed = urlparse(link)
        if parsed.scheme != "file":
            broken.append(link)
        elif not Path(unquote(parsed.path)).is_file():
            broken.append(link)
        elif parsed.fragment and f'id="{unquote(parsed.fragment)}"' not in \
                Path(unquote(parsed.path)).read_text(encoding="utf-8", errors="replace"):
            broken.append(link)   # the anchor is on no element of its page (ids are written as id="...")
    checks.check(not broken, f"{where}: every link resolves ({len(broken)} broken: {broken[:3]})")


def check_class_page(driver, out: Path, checks: Checks) -> list[str]:
    header, rows = gradebook_rows(out)
    students = records(out)
    driver.get((out / "report" / "index.html").resolve().as_uri())
    page_is_clean(driver, checks, "class page", "reduction-labs class report")
    names = driver.execute_script("return Array.from(document.querySelectorAll('#gradebook tbody tr'), "
                                  "r => r.getAttribute('data-name'));")
    checks.check(names == [csv_name(row[0]) for row in rows],
                 f"gradebook: one row per gradebook.csv row, in its order ({len(names)} rows, {len(rows)} in the csv)")
    shown = driver.execute_script("return Array.from(document.querySelectorAll('#gradebook tbody tr td:first-child a'),"
                                  " a => a.textContent);")
    checks.check(sorted(shown) == sorted(students),
                 f"gradebook: each graded student's name as its folder spells it, as text ({len(shown)} links, "
                 f"{len(students)} records)")
    cells = driver.execute_script(
        "const heads = Array.from(document.querySelectorAll('#gradebook thead th'), h => h.title);"
        "return Array.from(document.querySelectorAll('#gradebook tbody tr'), r => Object.fromEntries("
        "Array.from(r.cells).map((c, i) => [heads[i], [c.getAttribute('data-points'), "
        "(c.querySelector('.verdict') || {}).textContent || '', (c.querySelector('.verdict') || {}).title || '']])"
        ".filter(e => e[0])));")
    wrong = []
    for row, shown in zip(rows, cells):
        name = csv_name(row[0])
        for column, value in zip(header[1:], row[1:]):
            folder = column.split(" ")[0]
            if folder not in shown:
                continue
            points, letter, title = shown[folder]
            lab = students.get(name, {}).get("labs", {}).get(folder)
            if (points or "") != value or (lab and not letter.startswith(LETTERS.get(lab["verdict"], "?"))) \
                    or (lab and lab["verdict"] == "NOT_RUN" and "not run (no GPU)" not in title):
                wrong.append(f"{name} {folder}: page {points!r} {letter!r}, csv {value!r}")
    checks.check(not wrong, f"gradebook: points as gradebook.csv, letters as the records ({len(wrong)} differ: {wrong[:3]})")
    checks.check(driver.execute_script("return document.querySelectorAll('.figure svg').length;")
                 == len(list((out / "plots").glob("*.svg"))) - len(list((out / "plots").glob("student_*.svg"))),
                 "class page: every class figure drawn is inline")
    links_resolve(driver, checks, "class page")
    refused_file = out / "refused-folders.json"
    refused = [item["name"] for item in json.loads(refused_file.read_text(encoding="utf-8"))] if refused_file.is_file() else []
    shown = driver.execute_script("return Array.from(document.querySelectorAll('#refused-folders tbody td:first-child'),"
                                  " c => c.textContent);")
    checks.check(shown == refused, f"class page: the {len(refused)} refused folder(s) listed by name, as text")
    return names


def check_filter_and_sort(driver, names: list[str], checks: Checks) -> None:
    from selenium.webdriver.common.by import By
    wanted = min(names, key=len)[:3] if names else ""
    box = driver.find_element(By.ID, "filter")
    box.send_keys(wanted)
    visible = driver.execute_script("return Array.from(document.querySelectorAll('#gradebook tbody tr'))"
                                    ".filter(r => r.offsetParent !== null).map(r => r.getAttribute('data-name'));")
    checks.check(visible == [n for n in names if wanted.lower() in n.lower()],
                 f"filter: typing {wanted!r} leaves exactly the students whose name holds it ({len(visible)})")
    box.clear()
    box.send_keys(" ")
    header = driver.find_element(By.XPATH, "//table[@id='gradebook']/thead/tr/th[1]")
    order = []
    for _ in range(2):
        header.click()
        order.append(driver.execute_script("return Array.from(document.querySelectorAll('#gradebook tbody tr'), "
                                           "r => r.getAttribute('data-name'));"))
    ascending = sorted(names, key=lambda name: name.lower().encode("utf-16-be"))   # as JavaScript compares
    checks.check(order[0] == ascending and order[1] == ascending[::-1],
                 "sort: a click on the student column sorts by name, a second click reverses it")
    driver.find_element(By.XPATH, "//table[@id='gradebook']/thead/tr/th[last()]").click()
    totals = driver.execute_script("return Array.from(document.querySelectorAll('#gradebook tbody tr'), "
                                   "r => r.cells[r.cells.length - 1].getAttribute('data-value'));")
    numbers = [float(value) for value in totals if value]
    checks.check(numbers == sorted(numbers) and totals[:len(numbers)] == [v for v in totals if v],
                 f"sort: a click on the total column sorts the totals as numbers, blanks last ({totals})")


def check_student_pages(driver, out: Path, checks: Checks) -> None:
    students = records(out)
    pages = sorted((out / "report" / "students").glob("*.html"))
    checks.check(len(pages) == len(students), f"a page per graded student ({len(pages)} pages, {len(students)} records)")
    failing_shown = None
    for page in pages:
        driver.get(page.resolve().as_uri())
        name = driver.execute_script("return document.querySelector('h1').textContent;")
        page_is_clean(driver, checks, f"page of {name!r}", f"{name}: reduction-labs report")
        links_resolve(driver, checks, f"page of {name!r}")
        record = students.get(name)
        checks.check(record is not None, f"page of {name!r}: the heading is the student's name, as text")
        failed = [lab for lab in (record or {}).get("labs", {}).values()
                  if lab["verdict"] not in ("PASSED", "NOT_RUN", "MISSING")]
        if failed and failing_shown is None:
            lab = failed[0]
            text = driver.execute_script("return document.getElementById('lab-' + arguments[0]).parentNode.innerText;",
                                         lab["folder"])
            case = (lab.get("tests", {}).get("check") or {}).get("first_failure")
            wanted = [case["expected"], case["got"]] if case else [lab["detail"].splitlines()[0]]
            failing_shown = all(part in text for part in wanted)
            checks.check(failing_shown, f"page of {name!r}: lab {lab['folder']} shows why it failed ({wanted})")


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
        names = check_class_page(driver, args.out, checks)
        check_filter_and_sort(driver, names, checks)
        check_student_pages(driver, args.out, checks)
    finally:
        driver.quit()
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
