"""Each student's pages: the instructor's (why a lab failed, a sandboxed replay command for every
failing verdict, the sanitizer's cases, the GPU the labs ran on, the figure as the table) and the
copy for the student (no link out, no classmate, no machine path, no class seed)."""

from __future__ import annotations

from .common import Checks, Grading, StudentRecord, js_rows

FAILED = ("WRONG_ANSWER", "RUNTIME_ERROR", "TIMEOUT", "COMPILE_ERROR", "NOT_RUN")


def _section(driver, folder: str) -> str:
    return driver.execute_script("const e = document.getElementById('lab-' + arguments[0]); "
                                 "return e ? e.closest('section').innerText : '';", folder)


def _replayed(record: StudentRecord) -> list[str]:
    """The labs that must have a replay command: a failing verdict, or a pass with '!' or '?'."""
    return [folder for folder, entry in record.labs.items()
            if entry.verdict in FAILED or (entry.verdict == "PASSED" and (entry.sanitizer.hazards or
                                                                           entry.benchmark.time_refused))]


def _figure_is_the_table(driver, record: StudentRecord) -> bool:
    """The figure's ratios are the lab table's, and those are the record's (as the leaderboard shows them)."""
    table = {r[0]: r[1] for r in js_rows(driver, "table.labs tbody tr", "[r.getAttribute('data-lab'), "
                                         "r.querySelector('td.ratio').getAttribute('data-value')]") if r[1]}
    dots = {r[0]: r[1] for r in js_rows(driver, "#student-figure circle.dot", "[r.getAttribute('data-row'), "
                                        "r.getAttribute('data-value')]")}
    ratios = {folder: f"{entry.benchmark.ratio:.2f}" for folder, entry in record.labs.items()
              if entry.benchmark.ratio is not None}
    return table == dots == ratios


def instructor_page(driver, grading: Grading, record: StudentRecord, checks: Checks, where: str) -> None:
    replay = [f for f in _replayed(record) if "--require-sandbox" not in _section(driver, f)
              or f"--seed {record.seed}" not in _section(driver, f) or record.submission in _section(driver, f)]
    checks.check(not replay, f"{where}: a sandboxed replay command, without this machine's paths, for every failing "
                             f"verdict, '!' and '?' ({replay[:3]})")
    why = [f for f, entry in record.labs.items() if entry.verdict in FAILED
           and not all(part in _section(driver, f) for part in _reason(entry))]
    checks.check(not why, f"{where}: every failing lab shows why (its first failing case or its detail) ({why[:3]})")
    cases = [f for f, entry in record.labs.items() if entry.sanitizer.findings and "case(s)" not in _section(driver, f)
             and "not in this record" not in _section(driver, f)]
    checks.check(not cases, f"{where}: the sanitizer's findings say how many cases each tool ran ({cases[:3]})")
    gpu = driver.execute_script("return Array.from(document.querySelectorAll('.facts div'), d => d.innerText)"
                                ".find(t => t.startsWith('GPU')) || '';")
    ran = record.machine.get("gpu")
    checks.check(("none" in gpu) != bool(ran), f"{where}: the GPU fact says the labs ran on a GPU when they did ({gpu!r})")
    checks.check(_figure_is_the_table(driver, record), f"{where}: the figure's ratios are the lab table's, the record's")


def _reason(entry) -> list[str]:
    case = (entry.tests.check or {}).get("first_failure")
    if case and case.get("expected"):
        return [case["expected"], case["got"]]
    return [" ".join(entry.detail.splitlines()[0].split())[:60]] if entry.detail else []


def handout(driver, grading: Grading, record: StudentRecord, checks: Checks, where: str) -> None:
    outward = js_rows(driver, "a[href]", "r.getAttribute('href')")
    outward = [link for link in outward if not link.startswith("#")]
    source = driver.page_source
    classmates = set(grading.names) - {record.student}
    texts = set(js_rows(driver, "body *", "r.children.length ? '' : r.textContent.trim()"))
    named = sorted(classmates & texts)
    named += [n for n in classmates if f'data-student="{n}"' in source]
    secrets = [s for s in (record.seed, record.submission, str(grading.out.resolve()), str(grading.out))
               if s and s in source]
    secrets += [entry.source for entry in record.labs.values() if entry.source and entry.source in source]
    checks.check(not outward and not named and not secrets and "$CLASS" not in source,
                 f"{where}: no link out ({outward[:2]}), no classmate ({named[:2]}), no machine path or class seed "
                 f"({len(secrets)})")
    missing = [f for f in _replayed(record) if "--self" not in _section(driver, f)]
    checks.check(not missing, f"{where}: the student's own replay (its self-check) for every failing lab ({missing[:3]})")
    checks.check(_figure_is_the_table(driver, record), f"{where}: the figure's ratios are the lab table's, the record's")
