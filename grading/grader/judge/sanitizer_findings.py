"""A compute-sanitizer run's finding, from the tool's own log (sanitizer_log.py) and its exit status.

Nothing the program under the tool printed decides anything: stdout and stderr are its program
output, kept (short) beside the finding and shown. The log decides, read strictly, and the tool's
exit status must agree with it: with --error-exitcode 99 the tool ends with 0 after a summary of
no errors and with 99 after one with errors (racecheck's warnings alone: either). A run whose
result is missing or garbled counts as one finding, and its note says which:

  - the log is empty, over its bound, not in the tool's shape, without a summary, with two, or
    with lines after it (sanitizer_log.read_log's words);
  - the tool ended with another status than the log says (a program that killed the tool, or a
    tool that failed; the student's code runs as the tool's own uid and can stop it);
  - the grader stopped the run at its time limit.

A lab reaches the sanitizer only after it passed its tests, so a run the program broke costs the
penalty instead of avoiding it. Pure functions of a ProcessResult, tested on canned logs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..outputs.program_output import program_output
from ..sandbox.process import ProcessResult
from .sanitizer_log import ERROR_EXITCODE, read_log

CLEAN, HAZARDS, UNREADABLE = "clean", "hazards", "unreadable"
FINDINGS = (HAZARDS, UNREADABLE, "incomplete")   # statuses that count ("incomplete": records of earlier graders)
OUTPUT_BYTES = 2 << 10   # the program output kept beside a finding (the test run's report shows 16 KiB)
# Why a run did not start, in the loader's or setpriv's words: quoted only when the log is empty (the
# tool never ran the program, so nothing of the student's wrote that stderr).
_START_FAILURE = re.compile(r"error while loading shared libraries: [^\n]{1,120}|setpriv: failed to execute [^\n]{1,120}")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


@dataclass
class SanitizerFinding:
    tool: str
    status: str            # CLEAN, HAZARDS (the tool reported some), UNREADABLE (no result to read: a finding)
    count: int = 0
    warnings: int = 0
    report: list[str] = field(default_factory=list)
    note: str = ""
    program_output: str = ""   # what the program printed under the tool: shown, decides nothing

    def to_json(self) -> dict:
        return {"tool": self.tool, "status": self.status, "count": self.count, "warnings": self.warnings,
                "report": self.report, "note": self.note, "program_output": self.program_output}

    @property
    def counts(self) -> bool:
        return self.status in FINDINGS


def _status_problem(returncode: int | None, errors: int, warnings: int) -> str:
    """Why the tool's exit status disagrees with its summary ("" when it agrees)."""
    expected = (0, ERROR_EXITCODE) if errors == 0 and warnings else ((ERROR_EXITCODE,) if errors else (0,))
    if returncode in expected:
        return ""
    said = f"{errors} error(s)" + (f" and {warnings} warning(s)" if warnings else "")
    if returncode not in (0, ERROR_EXITCODE):
        return (f"compute-sanitizer ended with status {returncode}, neither 0 nor {ERROR_EXITCODE}, after a summary "
                f"of {said}: the program under it, or the tool, failed")
    return f"compute-sanitizer ended with status {returncode} after a summary of {said}: they disagree"


def why_unreadable(result: ProcessResult, tool: str | None = None) -> str:
    """Why the run has no result to read ("" when it has one); `tool`: whose summary it must end with."""
    if result.timed_out or result.stalled:
        return f"compute-sanitizer did not finish within {result.timeout_s or 0:.0f} s (the tests alone finished)"
    log = read_log(result.log, tool)
    if log.problem:
        cause = _START_FAILURE.search(result.stderr) if not result.log else None
        return (f"compute-sanitizer's log {log.problem} (status {result.returncode})"
                + (f" ({_UNPRINTABLE.sub('?', cause.group(0))[:160]})" if cause else ""))
    return _status_problem(result.returncode, log.errors, log.warnings)


def sanitizer_finding(tool: str, result: ProcessResult) -> SanitizerFinding:
    """The finding of one compute-sanitizer run (`result.log`: the tool's log, as it arrived)."""
    log = read_log(result.log, tool)
    output = program_output(result.stdout, result.stderr, OUTPUT_BYTES)
    if why := why_unreadable(result, tool):
        return SanitizerFinding(tool, UNREADABLE, 1, 0, log.report, why + ": counted as a finding", output)
    if log.errors or log.warnings:  # racecheck's warnings too: the volatile-only last warp is one (lab 07's lesson)
        return SanitizerFinding(tool, HAZARDS, log.errors + log.warnings, log.warnings, log.report, "", output)
    return SanitizerFinding(tool, CLEAN, 0, 0, log.report, "", output)


def self_test(run: Callable[[str], ProcessResult], tools: Iterable[str], what: str) -> str:
    """Every tool on a trusted program (`run(tool)`, e.g. a lab's reference module through the same
    channel as the students'): "" when each log is clean, else what went wrong. A grading whose tool
    cannot report on its channel here would count every student's run as a finding."""
    for tool in tools:
        finding = sanitizer_finding(tool, run(tool))
        if finding.status != CLEAN:
            said = finding.note or f"{finding.count} hazard(s): {'; '.join(finding.report[:2])}"
            return f"{tool} on {what}: {said}"
    return ""
