"""Turning what the test runner, compute-sanitizer and the benchmark printed into verdicts.

Everything here is a pure function of captured text and exit codes, so it is tested on canned
outputs (grading/grader_tests/fixtures) without a GPU or a compiler.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field

# Verdicts, from best to worst as far as the summary letters go.
PASSED = "PASSED"
WRONG_ANSWER = "WRONG_ANSWER"
RUNTIME_ERROR = "RUNTIME_ERROR"
TIMEOUT = "TIMEOUT"
COMPILE_ERROR = "COMPILE_ERROR"
MISSING = "MISSING"
NOT_RUN = "NOT_RUN"
VERDICTS = (PASSED, WRONG_ANSWER, RUNTIME_ERROR, TIMEOUT, COMPILE_ERROR, MISSING, NOT_RUN)
LETTERS = {PASSED: "P", WRONG_ANSWER: "W", RUNTIME_ERROR: "R", TIMEOUT: "T", COMPILE_ERROR: "C",
           MISSING: "M", NOT_RUN: "N"}

# The test runner's exit codes and markers (grading/tests/lab_tests_main.cpp, lab_runner.hpp,
# common/include/reduction/watchdog.hpp).
EXIT_OK = 0
EXIT_TESTS_FAILED = 1
EXIT_USAGE_OR_LOAD = 2
EXIT_RUNTIME_ERROR = 3
EXIT_TIMEOUT = 124
EXIT_NO_GPU = 77
COMPLETE_MARKER = "REDUCTION-TESTS-COMPLETE"
LOAD_ERROR_MARKER = "REDUCTION-LOAD-ERROR:"
RUNTIME_ERROR_MARKER = "REDUCTION-RUNTIME-ERROR:"
TIMEOUT_MARKER = "REDUCTION-TIMEOUT:"
NOT_IMPLEMENTED = "not implemented yet"


@dataclass
class ProcessResult:
    """One finished (or killed) subprocess: what the grader knows about a run."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False       # the grader's own wall-clock limit killed it
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    timeout_s: float | None = None


@dataclass
class FirstFailure:
    test: str
    case: str = ""        # "lab 02_atomic (global atomic), n = 33, type = int, ..."
    expected: str = ""    # "expected 75, got 0 (difference -75)"
    hint: str = ""
    block: str = ""       # the whole failure block, file:line lines removed

    def summary(self) -> str:
        parts = [self.test + ":"]
        parts += [text for text in (self.case, self.expected, ("hint: " + self.hint) if self.hint else "") if text]
        if len(parts) == 1 and self.block:
            parts.append(self.block.splitlines()[0])
        return "\n  ".join(parts)

    def to_json(self) -> dict:
        return {"test": self.test, "case": self.case, "expected": self.expected, "hint": self.hint,
                "block": self.block}


@dataclass
class TestVerdict:
    verdict: str
    detail: str
    first_failure: FirstFailure | None = None
    failed_tests: int = 0


_RUN_LINE = re.compile(r"^\[ RUN      \] (\S+)")
_FAILED_LINE = re.compile(r"^\[  FAILED  \] (\S+)")
_FAILURE_LOCATION = re.compile(r"^.*:\d+: Failure$")
_FAILED_COUNT = re.compile(r"^\s*(\d+) FAILED TESTS?")


def tail(text: str, lines: int = 40, chars: int = 4000) -> str:
    """The last `lines` lines of text, at most `chars` characters."""
    kept = "\n".join(text.rstrip("\n").splitlines()[-lines:])
    return kept[-chars:]


def marker_line(text: str, marker: str) -> str | None:
    """The rest of the first line that starts with `marker`, stripped; None when absent."""
    for line in text.splitlines():
        if line.startswith(marker):
            return line[len(marker):].strip()
    return None


def last_test_started(stdout: str) -> str | None:
    """The test that was running when the output stopped (the last RUN line without a result)."""
    running = None
    for line in stdout.splitlines():
        if match := _RUN_LINE.match(line):
            running = match.group(1)
        elif line.startswith(("[       OK ]", "[  FAILED  ]", "[  SKIPPED ]")):
            running = None
    return running


def first_failure(stdout: str) -> FirstFailure | None:
    """The first failure block of a gtest run: from its RUN line to its FAILED line."""
    lines = stdout.splitlines()
    current, body = None, []
    for line in lines:
        if match := _RUN_LINE.match(line):
            current, body = match.group(1), []
            continue
        if current is None:
            continue
        if (match := _FAILED_LINE.match(line)) and match.group(1) == current:
            if body:
                return _parse_block(current, body)
            current = None
            continue
        if line.startswith(("[       OK ]", "[  SKIPPED ]")):
            current = None
            continue
        body.append(line)
    return None


def _parse_block(test: str, body: list[str]) -> FirstFailure:
    """The first failure of a test's output: its "lab ..., n = ..." line, expected/got and hint, or
    for a plain EXPECT_* check the message streamed after it."""
    chunks, current = [], None
    for line in body:
        if _FAILURE_LOCATION.match(line):
            current = []
            chunks.append(current)
        elif current is not None and line.strip() != "Failed":
            current.append(line)
    first = chunks[0] if chunks else [line for line in body if line.strip()]
    failure = FirstFailure(test=test, block="\n".join(first).strip())
    for line in first:
        text = line.strip()
        if not failure.case and text.startswith("lab ") and ", n = " in text:
            failure.case = text.split(": d_in was modified")[0]
        elif not failure.expected and text.startswith("expected "):
            failure.expected = text
        elif not failure.hint and text.startswith("hint: "):
            failure.hint = text[len("hint: "):]
    if not failure.hint and not failure.expected:
        lines = [line.strip() for line in first if line.strip()]
        if lines:
            failure.hint = lines[-1]  # the message streamed into the failed EXPECT_*
    return failure


def failed_test_count(stdout: str) -> int:
    for line in stdout.splitlines():
        if match := _FAILED_COUNT.match(line):
            return int(match.group(1))
    return len({match.group(1) for line in stdout.splitlines() if (match := _FAILED_LINE.match(line))})


def signal_name(returncode: int) -> str:
    number = -returncode if returncode < 0 else returncode - 128
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def test_verdict(result: ProcessResult) -> TestVerdict:
    """The verdict of one lab's test run from the runner's exit code, markers and gtest output."""
    out, err, rc = result.stdout, result.stderr, result.returncode
    running = last_test_started(out)
    during = f" (during {running})" if running else ""
    complete = COMPLETE_MARKER in out

    if result.timed_out:
        limit = f"{result.timeout_s:.0f} s" if result.timeout_s else "the time limit"
        return TestVerdict(TIMEOUT, f"the tests did not finish within {limit} and were killed{during}: "
                                    "a kernel or loop that never terminates?")
    if (message := marker_line(err, TIMEOUT_MARKER)) is not None or rc == EXIT_TIMEOUT:
        return TestVerdict(TIMEOUT, message or f"the runner reported a timeout{during}")
    if rc == EXIT_NO_GPU:
        return TestVerdict(NOT_RUN, "no CUDA device on this machine: the GPU tests were skipped")
    if (message := marker_line(err, LOAD_ERROR_MARKER)) is not None:
        return TestVerdict(COMPILE_ERROR, "the module compiled but cannot be loaded (an undefined function or "
                                          "variable?): " + message)
    if (message := marker_line(err, RUNTIME_ERROR_MARKER)) is not None:
        if running and running not in message:
            message = f"{running}: {message}"
        return TestVerdict(RUNTIME_ERROR, message)
    if rc is not None and (rc < 0 or rc > 128):
        return TestVerdict(RUNTIME_ERROR, f"the test process crashed with {signal_name(rc)}{during}")
    if rc == EXIT_RUNTIME_ERROR:
        return TestVerdict(RUNTIME_ERROR, f"runtime error{during}: " + (tail(err, 3) or "no message"))
    if not complete:
        return TestVerdict(RUNTIME_ERROR, f"the test process exited with status {rc} before the tests finished"
                                          f"{during}: exit() called from lab code?")
    if rc == EXIT_OK:
        return TestVerdict(PASSED, "all tests passed")
    if rc == EXIT_TESTS_FAILED:
        failure = first_failure(out)
        count = failed_test_count(out)
        if failure and NOT_IMPLEMENTED in failure.block:
            return TestVerdict(WRONG_ANSWER, NOT_IMPLEMENTED, failure, count)
        if failure:
            return TestVerdict(WRONG_ANSWER, f"{count} test(s) failed; first: {failure.summary()}", failure, count)
        return TestVerdict(WRONG_ANSWER, f"{count} test(s) failed", None, count)
    if rc == EXIT_USAGE_OR_LOAD:
        return TestVerdict(RUNTIME_ERROR, "the test runner rejected its command line (a grader problem): "
                                          + tail(err, 3))
    return TestVerdict(RUNTIME_ERROR, f"the test process exited with status {rc}{during}")


# ---------------------------------------------------------------------------------------------
# compute-sanitizer

SANITIZER_ERROR_EXIT = 99
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+) errors?")
_RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
_PREFIX = "========="


@dataclass
class SanitizerFinding:
    tool: str
    status: str            # "clean", "hazards", "error" (the tool could not judge), "timeout"
    count: int = 0
    warnings: int = 0
    report: list[str] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict:
        return {"tool": self.tool, "status": self.status, "count": self.count, "warnings": self.warnings,
                "report": self.report, "note": self.note}


def sanitizer_finding(tool: str, result: ProcessResult, report_lines: int = 12) -> SanitizerFinding:
    """Hazard count and the first report lines of one compute-sanitizer run."""
    text = result.stdout + "\n" + result.stderr
    if result.timed_out:
        return SanitizerFinding(tool, "timeout", note=f"compute-sanitizer did not finish within "
                                                       f"{result.timeout_s or 0:.0f} s (no penalty)")
    errors = warnings = None
    if match := _ERROR_SUMMARY.search(text):
        errors = int(match.group(1))
    if match := _RACECHECK_SUMMARY.search(text):
        errors = max(errors or 0, int(match.group(2)))
        warnings = int(match.group(3))
    report = [line[len(_PREFIX):].strip() for line in text.splitlines()
              if line.startswith(_PREFIX) and line[len(_PREFIX):].strip()
              and "COMPUTE-SANITIZER" not in line and "SUMMARY" not in line]
    if result.returncode == SANITIZER_ERROR_EXIT and not errors:
        errors = max(1, sum(1 for line in report if line.startswith(("Error", "Invalid", "Race", "Barrier"))))
    if errors:
        return SanitizerFinding(tool, "hazards", errors, warnings or 0, report[:report_lines])
    if errors is None and result.returncode not in (0, EXIT_TESTS_FAILED):
        return SanitizerFinding(tool, "error", 0, warnings or 0, report[:report_lines],
                                note=f"compute-sanitizer exited with status {result.returncode} without a "
                                     f"summary (no penalty): {tail(result.stderr, 3)}")
    return SanitizerFinding(tool, "clean", 0, warnings or 0, report[:report_lines])
