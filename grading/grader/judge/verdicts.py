"""Verdicts: a lab's test verdict from the trusted checker's report and what the grader itself saw
of the run (its own limits, the exit status). A sanitizer run's finding: sanitizer_findings.py.

Pure functions of their inputs, tested on canned reports without a GPU or a compiler. Nothing a
student's process printed decides a verdict: a lab PASSES only when the checker found every case
of the plan observed and right; markers, exit codes and claims of "no GPU" count for nothing.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from ..contract import RUNNER_EXIT_WATCHDOG, VERDICT_LETTERS, VERDICT_MARKS, VERDICT_ORDER, VERDICT_WORDS
from ..sandbox.process import ProcessResult
from .call_limit import CallLimit
from .checks import TestCheck, quote_module_message

# Verdicts, from best to worst, their summary letters and words: contract.json "verdicts".
VERDICTS = VERDICT_ORDER
LETTERS, WORDS = VERDICT_LETTERS, VERDICT_WORDS
HAZARD_MARK, REFUSED_TIME_MARK = VERDICT_MARKS["hazard"], VERDICT_MARKS["refused_time"]


def _verdict(name: str) -> str:
    if name not in VERDICTS:
        raise ImportError(f"contract.json verdicts: no {name}")
    return name


PASSED, WRONG_ANSWER, RUNTIME_ERROR = _verdict("PASSED"), _verdict("WRONG_ANSWER"), _verdict("RUNTIME_ERROR")
TIMEOUT, COMPILE_ERROR = _verdict("TIMEOUT"), _verdict("COMPILE_ERROR")
MISSING, NOT_RUN = _verdict("MISSING"), _verdict("NOT_RUN")
# The letters' legend, as the console summary and the class report print it.
LEGEND = (", ".join(f"{LETTERS[v]} {WORDS[v]}" for v in VERDICTS) + f"; {HAZARD_MARK} sanitizer finding; "
          f"{REFUSED_TIME_MARK} a time the grader refused: below the read roof, or contradicted by its clock "
          "(no performance points)")

EXIT_WATCHDOG = RUNNER_EXIT_WATCHDOG  # the runner's own per-call deadline
NOT_IMPLEMENTED = "not implemented yet"
COMPILE_TIMED_OUT = "the compiler did not finish within"   # a compile's detail, when it ran out of time


@dataclass
class TestVerdict:
    verdict: str
    detail: str


def signal_name(returncode: int) -> str:
    number = -returncode if returncode < 0 else returncode - 128
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _failure_text(check: TestCheck) -> str:
    failure = check.first_failure or {}
    parts = [f"{check.wrong + check.not_implemented} of {check.cases} cases failed; first: {failure.get('what', '?')}"]
    if failure.get("expected") or failure.get("got"):
        parts.append(f"expected {failure.get('expected', '')}, got {failure.get('got', '')}")
    if failure.get("hint"):
        parts.append("hint: " + failure["hint"])
    if failure.get("case"):
        parts.append(f"replay: grade.py --seed {check.seed} (case {failure['case']})")
    return "\n  ".join(parts)


def test_verdict(check: TestCheck, run: ProcessResult, limit: CallLimit) -> TestVerdict:
    """The verdict of one lab's test run: the checker's report, then the grader's own observations.
    `limit`: the run's call limit (the runner's watchdog ends a call past it; the grader's own stall
    limit, past the full one, ends a run whose watchdog was silenced)."""
    during = f" (during {check.last_started_what})" if check.last_started_what and check.observed < check.cases else ""
    if check.all_correct:
        return TestVerdict(PASSED, f"all {check.cases} cases right")
    if check.refused:
        return TestVerdict(COMPILE_ERROR, "the module declares another lab than this one: the lab's identity comes "
                                          "from the official skeleton, outside the STUDENT CODE region")
    if check.load_error:
        return TestVerdict(COMPILE_ERROR, "the module compiled but cannot be loaded (an undefined function or "
                                          "variable?)")
    if run.timed_out:
        limit = f"{run.timeout_s:.0f} s" if run.timeout_s else "the time limit"
        return TestVerdict(TIMEOUT, f"the tests did not finish within {limit} and were stopped{during}: "
                                    "a kernel or loop that never terminates?")
    if run.stalled or (run.returncode == EXIT_WATCHDOG and check.observed < check.cases):
        within = f"{limit.full_s:.0f} s" if run.stalled else limit.words(check.last_started_elements)
        return TestVerdict(TIMEOUT, f"one call did not finish within {within}{during}: look for a "
                                    "loop whose condition never changes (`s >> 1` for `s >>= 1`) or a "
                                    "__syncthreads() some threads never reach")
    if run.output_limit:
        return TestVerdict(RUNTIME_ERROR, f"the run wrote more output than the grader accepts and was stopped{during}")
    if check.error_message or check.error_case:
        return TestVerdict(RUNTIME_ERROR, f"error{during or ' ' + check.last_started_what}: "
                                          + quote_module_message(check.error_message))
    if check.observed < check.cases:
        rc = run.returncode
        how = (f"crashed with {signal_name(rc)}" if rc is not None and (rc < 0 or rc > 128)
               else f"ended with status {rc}")
        return TestVerdict(RUNTIME_ERROR, f"the test process {how} after {check.observed} of {check.cases} cases"
                                          f"{during}: a crash, or exit() called from lab code?")
    if check.not_implemented == check.cases:
        return TestVerdict(WRONG_ANSWER, NOT_IMPLEMENTED)
    return TestVerdict(WRONG_ANSWER, _failure_text(check))
