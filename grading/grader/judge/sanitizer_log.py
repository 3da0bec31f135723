"""compute-sanitizer's own log: a channel the program under test cannot write, and its strict reading.

The program compute-sanitizer checks is the student's, and it shares the tool's stdout and stderr:
it can print anything there, a clean summary included (5f01a7f: a racy lab printed one on its
stderr and lost no point). So the tool's report travels on a pipe of its own. The grader makes one
per run and hands the write end to the sandboxed tool, which writes all of its text there
(`--log-file /proc/self/fd/N`); the runner the tool starts inherits that descriptor (and perhaps
the tool's own copy of the log), and closes every descriptor of the pipe before it loads the
student's module (`--close-sanitizer-log=DEV:INO`, grading/runner/descriptors.hpp). The grader
reads the pipe live (process.py's reading of a report channel), at most LOG_LIMIT of it.

The student's code still runs as the tool's own uid, so it can open /proc/<the tool's pid>/fd/<the
log> and write there. What it writes can only make the log unreadable, never clean: the log must
have the tool's shape (read_log), and the tool writes its one summary after the program ended,
so a forged line is either a second summary, a line after the summary, or a line in a log that
already holds the real one. Anything not in that shape is a finding (sanitizer_findings.py).
stdout and stderr stay the student's program output: shown, deciding nothing.

The shape, from the tool's real output (grader_tests/fixtures/*.txt, "--- log ---"): every line is
"=========" or starts with "========= "; the first is the banner "========= COMPUTE-SANITIZER"; the
last is the tool's one summary ("ERROR SUMMARY: N errors", racecheck's "RACECHECK SUMMARY: N
hazards displayed (E errors, W warnings)"), and no other line is a summary.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from ..contract import CLOSE_SANITIZER_LOG_FLAG
from ..sandbox.process import Channel

PREFIX = "========="
BANNER = PREFIX + " COMPUTE-SANITIZER"
LOG_LIMIT = 1 << 20        # the tool prints at most --print-limit (100) reports: far less than this
ERROR_EXITCODE = 99        # --error-exitcode: the tool's status when it found errors
REPORT_LINES = 12          # report lines quoted in a finding, each at most REPORT_WIDTH printable characters
REPORT_WIDTH = 200

_SUMMARY = re.compile(r"^[A-Z ]*SUMMARY:")
# The note the tool adds after its summary when it printed fewer reports than it found (seen on an
# H100, compute-sanitizer of CUDA 13.0, 2026-11-26: "ERROR SUMMARY: 261 errors", then this line with
# 161): part of the tool's last words, not a second summary.
_NOT_PRINTED = re.compile(r"ERROR SUMMARY: \d{1,12} errors? w(?:as|ere) not printed\. Use --print-limit option to "
                          r"adjust the number of printed errors")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d{1,12}) errors?")
_RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d{1,12}) hazards? displayed \((\d{1,12}) errors?, "
                                r"(\d{1,12}) warnings?\)")
# Report lines worth quoting: the tool's own kinds of line (the log holds nothing else, but a
# student can add lines of this shape through /proc: short and printable, at most REPORT_LINES).
_REPORT_LINE = re.compile(r"^(Invalid|Error|Race|Barrier|Warning|Uninitialized|Program hit|Address|at |and |by thread|"
                          r"Saved host backtrace|Host Frame|Device Frame|Access|Read|Write|Divergent|Unused)")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


class LogChannel(Channel):
    """The pipe of one sanitizer run's log: the tool gets its write end, the runner the pipe's name to
    close. Used as process.run_process's `channel` (read live, into ProcessResult.report)."""

    # A pipe is its maker's (root's), mode 0600: the tool, as the run's uid, could not open it by its
    # /proc/self/fd path. Others may write (only what can reach a holder's /proc/<pid>/fd can try: the
    # run's own processes), never read: a program that could open the log for reading could take the
    # tool's lines out of the pipe before the grader reads them. Only the grader reads (the read end).
    MODE = stat.S_IRUSR | stat.S_IWUSR | stat.S_IWOTH

    def __init__(self) -> None:
        super().__init__(token=False)
        os.fchmod(self.read_fd, self.MODE)
        info = os.fstat(self.read_fd)
        self.pipe = f"{info.st_dev}:{info.st_ino}"

    def tool_argv(self) -> list[str]:
        return ["--log-file", f"/proc/self/fd/{self.write_fd}"]

    def runner_argv(self) -> list[str]:
        return [f"{CLOSE_SANITIZER_LOG_FLAG}={self.pipe}"]


def log_text(transcript: str) -> str:
    """The log as the tool wrote it, from the channel's transcript (each line after its arrival time)."""
    return "".join(line.split(" ", 1)[-1] + "\n" for line in transcript.splitlines())


@dataclass
class SanitizerLog:
    """What a log says, read strictly. `problem` says why it is unreadable ("" when it is not); the
    counts are None without a readable summary."""
    errors: int | None = None
    warnings: int = 0
    report: list[str] = field(default_factory=list)
    problem: str = ""


def _summary(body: str, tool: str | None) -> tuple[int, int] | None:
    """(errors, warnings) of a summary line of `tool` (None: of any tool), or None."""
    if tool in (None, "racecheck") and (match := _RACECHECK_SUMMARY.fullmatch(body)):
        return int(match.group(2)), int(match.group(3))
    if tool != "racecheck" and (match := _ERROR_SUMMARY.fullmatch(body)):
        return int(match.group(1)), 0
    return None


def _shape_problem(lines: list[str]) -> str:
    if not lines:
        return "is empty: compute-sanitizer wrote nothing there (it did not start, or could not open its log)"
    for number, line in enumerate(lines, 1):
        if line != PREFIX and not line.startswith(PREFIX + " "):
            return f"has a line that is not in compute-sanitizer's shape (line {number}): something else wrote into it"
    if lines[0] != BANNER:
        return "does not begin with compute-sanitizer's banner"
    return ""


def read_log(text: str, tool: str | None = None) -> SanitizerLog:
    """The strict reading of one run's log (`tool`: whose summary it must end with; None: any tool's)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    bodies = [line[len(PREFIX):].strip() for line in lines]
    report = [_UNPRINTABLE.sub("?", body)[:REPORT_WIDTH] for body in bodies if _REPORT_LINE.match(body)]
    log = SanitizerLog(report=report[:REPORT_LINES])
    if len(lines) > 1 and _NOT_PRINTED.fullmatch(bodies[-1]) and _SUMMARY.match(bodies[-2]):
        lines, bodies = lines[:-1], bodies[:-1]   # the tool's note after its summary
    summaries = [number for number, body in enumerate(bodies) if _SUMMARY.match(body)]
    if len(text) > LOG_LIMIT:
        log.problem = f"is over {LOG_LIMIT >> 10} KiB"
    elif problem := _shape_problem(lines):
        log.problem = problem
    elif not summaries:
        log.problem = "holds no summary: the tool did not finish"
    elif len(summaries) > 1:
        log.problem = f"holds {len(summaries)} summaries: something else wrote into it"
    elif summaries[0] != len(lines) - 1:
        log.problem = "has lines after its summary: something else wrote into it"
    elif (counts := _summary(bodies[-1], tool)) is None:
        log.problem = f"ends with a summary that is not {tool or 'compute-sanitizer'}'s"
    else:
        log.errors, log.warnings = counts
    return log


def has_summary(text: str) -> bool:
    """Whether any line of the log is a summary (resources.py: a run that ended without one)."""
    return any(line.startswith(PREFIX) and _SUMMARY.match(line[len(PREFIX):].strip()) for line in text.splitlines())
