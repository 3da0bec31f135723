"""The class page against the grading it reports: the gradebook as gradebook.csv and the records
say, every flag of the run in "Needs attention" (or "None"), the summary's and the histogram's
numbers as the gradebook's cells give them, and the leaderboard's figure as its tables."""

from __future__ import annotations

import statistics

from .common import LETTERS, Checks, Grading, js_rows, missing_flags

FLAG_KINDS_OF_OURS = {"not_graded_yet", "refused_folder"}


def gradebook(driver, grading: Grading, checks: Checks) -> None:
    names = js_rows(driver, "#gradebook tbody tr", "r.getAttribute('data-name')")
    checks.check(names == grading.names, f"gradebook: one row per gradebook.csv row, in its order ({len(names)} rows, "
                                         f"{len(grading.rows)} in the csv)")
    shown_names = js_rows(driver, "#gradebook tbody tr th.name a", "r.textContent")
    graded = sorted(grading.raw)
    checks.check(sorted(shown_names) == graded, f"gradebook: each graded student's name as its folder spells it, as "
                                                f"text ({len(shown_names)} links, {len(graded)} records)")
    cells = js_rows(driver, "#gradebook tbody tr", "Object.fromEntries(Array.from(r.querySelectorAll('td[data-lab]'), "
                    "c => [c.getAttribute('data-lab'), [c.getAttribute('data-points'), "
                    "(c.querySelector('.verdict') || {}).textContent || '', "
                    "(c.querySelector('.verdict') || {}).title || '']]))")
    wrong = []
    for name, row, shown in zip(grading.names, grading.rows, cells):
        for column, value in zip(grading.header[1:], row[1:]):
            folder = column.split(" ")[0]
            if folder not in shown:
                continue
            points, letter, title = shown[folder]
            lab = grading.raw.get(name, {}).get("labs", {}).get(folder)
            if (points or "") != value or (lab and not letter.startswith(LETTERS.get(lab["verdict"], "?"))) \
                    or (lab and lab["verdict"] == "NOT_RUN" and "not run (no GPU)" not in title):
                wrong.append(f"{name} {folder}: page {points!r} {letter!r}, csv {value!r}")
    checks.check(not wrong, f"gradebook: points as gradebook.csv, letters as the records ({len(wrong)} differ: {wrong[:3]})")
    heads = js_rows(driver, "#gradebook thead th[data-lab]", "[r.getAttribute('data-lab'), r.textContent]")
    unnamed = [lab for lab, label in heads if lab.partition("_")[2].replace("_", " ") not in label]
    checks.check(heads and not unnamed, f"gradebook: every lab column is headed by the lab's name ({unnamed or 'all'})")


def expected_concerns(grading: Grading) -> set[tuple[str, str, str]]:
    """(kind, student, lab) of every flag the run has: the records' own, those their fields imply
    (a record graded before flags), the students not graded, the refused folders."""
    expected = set()
    for name, record in grading.records.items():
        expected |= {(f.get("kind", ""), name, f.get("lab", "")) for f in record.flags}
        expected |= {(f.kind, name, f.lab) for f in missing_flags(record)}
    expected |= {("not_graded_yet", name, "") for name in grading.names if name not in grading.records}
    expected |= {("refused_folder", item["name"], "") for item in grading.refused}
    return expected


def attention(driver, grading: Grading, checks: Checks) -> None:
    order = driver.execute_script("return ['attention-heading', 'summary-heading', 'gradebook-heading'].map(id => "
                                  "{const e = document.getElementById(id); return e ? e.getBoundingClientRect().top "
                                  "+ window.scrollY : -1;});")
    checks.check(0 <= order[0] < driver.execute_script("return window.innerHeight;") and order[0] < order[1] < order[2],
                 f"class page: needs attention on the first screen, then the summary, then the gradebook ({order})")
    rows = js_rows(driver, "#attention-table tbody tr", "[r.getAttribute('data-kind'), r.cells[1].textContent, "
                   "Array.from(r.cells[2].querySelectorAll('a'), a => a.textContent), "
                   "r.querySelector('.derived') ? 'derived' : '']")
    shown = {(kind, student, lab) for kind, student, labs, _ in rows for lab in (labs or [""])}
    expected = expected_concerns(grading)
    none = driver.execute_script("return !!document.getElementById('attention-none');")
    checks.check(shown == expected and none == (not expected),
                 f"needs attention: every flag of the run, one row each ({len(expected)} expected, {len(shown)} shown; "
                 f"missing {sorted(expected - shown)[:3]}, extra {sorted(shown - expected)[:3]})"
                 + ("; says None" if none else ""))
    if any("flags" in data for data in grading.raw.values()):   # records of a grader that records flags
        derived = [f"{kind} {student} {labs}" for kind, student, labs, mark in rows if mark]
        checks.check(not derived, "needs attention: the grader recorded every flag it could tell (none derived: "
                                  f"{derived[:2]})")
    refused = [r[1] for r in rows if r[0] == "refused_folder"]
    checks.check(refused == [item["name"] for item in grading.refused],
                 f"class page: the {len(grading.refused)} refused folder(s) listed by name, as text")


def _numbers(driver) -> tuple[list, dict]:
    cells = js_rows(driver, "#gradebook tbody tr", "[r.cells[1].getAttribute('data-value'), Array.from("
                    "r.querySelectorAll('td[data-lab]'), c => [c.getAttribute('data-lab'), c.getAttribute('data-verdict'), "
                    "c.getAttribute('data-points'), (c.querySelector('.verdict') || {}).textContent || ''])]")
    summary = js_rows(driver, "#lab-summary tbody tr", "[r.getAttribute('data-lab'), "
                      "Number(r.querySelector('[data-passed]').getAttribute('data-passed')), "
                      "Number(r.querySelector('[data-graded]').getAttribute('data-graded')), "
                      "r.querySelector('[data-mean]').getAttribute('data-mean'), "
                      "r.querySelector('[data-median]').getAttribute('data-median'), "
                      "Number(r.querySelector('[data-hazards]').getAttribute('data-hazards')), "
                      "Number(r.querySelector('[data-refused]').getAttribute('data-refused'))]")
    return cells, {row[0]: row[1:] for row in summary}


def _points(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def summary(driver, checks: Checks) -> None:
    """The summary's numbers, computed again from the gradebook's cells: the same values."""
    cells, shown = _numbers(driver)
    wrong = []
    for lab, (passed, graded, mean, median, hazards, refused) in shown.items():
        labs = [c for _, row in cells for c in row if c[0] == lab and c[1]]
        points = [float(c[2]) for c in labs if c[2] and c[1] != "NOT_RUN"]
        want = (sum(c[1] == "PASSED" for c in labs), len(labs), _points(statistics.fmean(points) if points else None),
                _points(statistics.median(points) if points else None), sum(c[3].endswith("!") for c in labs),
                sum(c[3].endswith("?") for c in labs))
        if want != (passed, graded, mean, median, hazards, refused):
            wrong.append(f"{lab}: summary {(passed, graded, mean, median, hazards, refused)}, gradebook {want}")
    checks.check(shown and not wrong, f"summary: pass rate, mean, median, ! and ? per lab as the gradebook's cells "
                                      f"({len(wrong)} differ: {wrong[:2]})")
    totals = [float(total) for total, _ in cells if total]
    bins = js_rows(driver, "#totals rect.bin", "[Number(r.getAttribute('data-low')), Number(r.getAttribute('data-high')), "
                   "Number(r.getAttribute('data-count')), r.getAttribute('data-last') === '1']")
    counted = [sum(1 for t in totals if low <= t and (t < high or last)) for low, high, _, last in bins]
    checks.check((not totals and not bins) or (counted == [b[2] for b in bins] and sum(counted) == len(totals)),
                 f"summary: the histogram counts the gradebook's totals ({[b[2] for b in bins]}, {len(totals)} totals)")
    median = driver.execute_script("return (document.querySelector('[data-key=\"median total\"]') || {}).textContent;")
    checks.check(not totals or median.split(" ")[0] == _points(statistics.median(totals)),
                 f"summary: the median total is the gradebook's ({median!r})")


def leaderboard(driver, grading: Grading, checks: Checks) -> None:
    """The figure's dots are the tables' ratios; ranks follow the ratios, equal ones tied; every
    passing lab with a ratio is ranked or named as not ranked."""
    dots = set(js_rows(driver, "#leaderboard-figure circle.dot", "r.getAttribute('data-row') + '|' + "
                       "r.getAttribute('data-student') + '|' + r.getAttribute('data-value')"))
    tables = js_rows(driver, "table.leaderboard", "[r.getAttribute('data-lab'), Array.from(r.tBodies[0].rows, row => "
                     "[row.getAttribute('data-student'), Number(row.cells[0].getAttribute('data-value')), "
                     "row.cells[2].getAttribute('data-value'), row.cells[3].textContent.trim()])]")
    rows = {f"{lab}|{student}|{ratio}" for lab, entries in tables for student, _, ratio, _ in entries}
    checks.check(dots == rows, f"leaderboard: the figure shows the tables' ratios, one dot each ({len(dots)} dots, "
                               f"{len(rows)} rows; differ: {sorted(dots ^ rows)[:3]})")
    bad_ranks = [f"{lab} {student}" for lab, entries in tables for student, rank, ratio, _ in entries
                 if rank != 1 + sum(1 for _, _, other, _ in entries if float(other) < float(ratio))]
    checks.check(not bad_ranks, f"leaderboard: ranks follow the ratios, equal ratios share a rank ({bad_ranks[:3]})")
    records = grading.records
    other = [f"{lab} {s}" for lab, entries in tables for s, _, ratio, _ in entries
             if s not in records or f"{records[s].labs[lab].benchmark.ratio:.2f}" != ratio]
    checks.check(not other, f"leaderboard: each ratio is the record's, as the student's page shows it ({other[:3]})")
    untimed = [f"{lab} {student}" for lab, entries in tables for student, _, _, time in entries if not time]
    checks.check(not untimed, f"leaderboard: every ranked submission has its time ({untimed[:3]})")
    ranked = {(student, lab) for lab, entries in tables for student, _, _, _ in entries}
    named = set(js_rows(driver, "#not-ranked a", "r.textContent"))
    passing = {(name, folder) for name, record in grading.records.items() for folder, entry in record.labs.items()
               if entry.verdict == "PASSED" and entry.benchmark.ratio is not None}
    lost = [pair for pair in passing if pair not in ranked and f"{pair[0]} ({pair[1]})" not in named]
    checks.check(not lost, f"leaderboard: every lab that passed with a ratio is ranked or named as not ranked ({lost[:3]})")
