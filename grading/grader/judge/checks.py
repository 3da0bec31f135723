"""The one reader of the trusted checker's reports (grading/runner/check_*.cpp), and the rules for
quoting anything a student's code said.

The checker never loads student code, so its reports are believed; what the untrusted runner
printed reaches the grader only through them. Text that came from a student module (an exception
message, the lab name it claims) is quoted only when it has the shape of a message the harness or
CUDA writes: a report never carries a file or variable the student's code read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields

from ..contract import REPORT_VERSION as VERSION, TESTS_REPORT as TESTS_FORMAT, TIMING_REPORT as TIMING_FORMAT


class CheckError(ValueError):
    """The checker's output is not a report of this version (a grader problem, never a student's)."""


@dataclass
class TestCheck:
    lab: str = ""
    seed: str = ""
    cases: int = 0
    observed: int = 0
    correct: int = 0
    wrong: int = 0
    not_implemented: int = 0
    malformed: int = 0
    duplicates: int = 0
    forged: int = 0           # lines on the report channel with another run's token (ignored)
    after_end: int = 0        # lines after the runner's "end" (ignored: it _exit()s there)
    end: bool = False
    refused: str = ""
    load_error: str = ""
    error_case: str = ""
    error_message: str = ""
    not_implemented_message: str = ""
    last_started: str = ""
    last_started_what: str = ""
    last_started_elements: int = 0   # the elements its call limit counted (call_limit.py)
    first_failure: dict | None = None

    @property
    def all_correct(self) -> bool:
        return self.cases > 0 and self.correct == self.cases and self.wrong == 0


@dataclass
class TimedItem:
    id: str
    lab: str
    type: str
    n: int
    samples: int = 0
    median_us: float = 0.0
    min_us: float = 0.0
    q1_us: float = 0.0
    q3_us: float = 0.0
    verified: bool = False
    problem: str = ""
    error_message: str = ""   # what the run said (untrusted): quote_module_message() before showing it
    # The timekeeper's clock (timekeeper_main.cpp), medians over the timed calls, in microseconds;
    # -1 where no call had every stamp. excess_us: from preparing the call's input to reading its
    # report, less the time the worker claimed for it; the grader holds it against the reference's.
    inputs: str = ""          # "shared" (the timekeeper wrote each call's input), "in_process", "host"
    clocked: int = 0          # timed calls with every stamp
    excess_us: float = -1.0
    excess_min_us: float = -1.0  # the least of the calls' excess (noise only ever adds to it)
    window_us: float = -1.0   # go to report
    prep_us: float = -1.0     # preparing the input (and starting the L2 flush) before the go
    calls_us: list = field(default_factory=list)   # each timed call's claim in call order (None: not reported)
    paired_ratio: float | None = None   # a paired run's ratio to the reference, call by call (benchmark.py)


@dataclass
class TimingCheck:
    device: str = ""
    malformed: int = 0        # lines that do not parse, or report a call twice
    forged: int = 0           # lines with another token
    after_end: int = 0        # lines after "end"
    end: bool = False
    items: list[TimedItem] = field(default_factory=list)
    inputs: str = ""          # how the timekeeper gave the inputs ("shared", "in_process", "host")
    inputs_why: str = ""      # why not shared, where the device could not share memory
    clock_error: str = ""     # the timekeeper's own failure, if any

    @property
    def tampered(self) -> str:
        """Why none of this run's timings may be believed ("" when they may)."""
        reasons = [f"{count} {what}" for count, what in (
            (self.malformed, "line(s) the checker could not read or that reported a call twice"),
            (self.forged, "line(s) without the run's token"),
            (self.after_end, "line(s) after the end of the report")) if count]
        return "the timing run's report channel held " + ", ".join(reasons) if reasons else ""

    def item(self, item_id: str) -> TimedItem | None:
        return next((item for item in self.items if item.id == item_id), None)


def _report(text: str, expected_format: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CheckError(f"the checker printed no report ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != expected_format or data.get("version") != VERSION:
        raise CheckError(f"not a {expected_format} report of version {VERSION}")
    return data


def _take(cls, data: dict):
    names = {f.name for f in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in names})


def parse_test_check(text: str) -> TestCheck:
    return _take(TestCheck, _report(text, TESTS_FORMAT))


def parse_timing_check(text: str) -> TimingCheck:
    data = _report(text, TIMING_FORMAT)
    return TimingCheck(device=str(data.get("device", "")), malformed=int(data.get("malformed", 0)),
                       forged=int(data.get("forged", 0)), after_end=int(data.get("after_end", 0)),
                       end=bool(data.get("end", False)),
                       items=[_take(TimedItem, item) for item in data.get("items", [])],
                       inputs=str(data.get("inputs", "")), inputs_why=str(data.get("inputs_why", "")),
                       clock_error=str(data.get("clock_error", "")))


@dataclass(frozen=True)
class DeviceCheck:
    """`reduction_lab_check device`: the CUDA devices its process sees (its CUDA_VISIBLE_DEVICES honoured)."""
    devices: int        # how many
    name: str           # the first one's
    pci_bus_id: str     # the first one's, as cudaDeviceGetPCIBusId writes it ("0000:3B:00.0"); "" when none


def parse_device_check(text: str) -> DeviceCheck | None:
    """The checker's device answer, or None when it printed none (no CUDA runtime, a crash)."""
    try:
        data = json.loads(text.strip().splitlines()[-1]) if text.strip() else None
        return DeviceCheck(int(data["devices"]), str(data.get("name", "")), str(data.get("pci_bus_id", "")))
    except (ValueError, TypeError, KeyError):
        return None


# ---------------------------------------------------------------------------------------------
# quoting what student code said

# REDUCTION_CHECK's message (common/include/reduction/check.hpp): "file:line: expr failed: cudaErrorX (text)"
_CUDA_ERROR = re.compile(r"^(?P<file>[\w./ -]{1,300}):(?P<line>\d{1,6}): .{0,400} failed: "
                         r"(?P<name>cuda[A-Za-z]{1,60}) \((?P<text>[A-Za-z0-9 ,.'-]{0,160})\)$", re.DOTALL)
_CUDA_ERROR_NAME = re.compile(r"^[\w./ -]{1,300}:\d{1,6}: .{0,400} failed: (?P<name>cuda[A-Za-z]{1,60}) \(.{0,200}\)$",
                              re.DOTALL)
_NOT_IMPLEMENTED = re.compile(r"^lab \d\d: not implemented yet \(write your code between the STUDENT CODE markers\)$")
WITHHELD = "its message is not shown: reports quote only what the tools say"


def cuda_error_name(message: str) -> str:
    """The CUDA error a module's message names, when it has the harness's shape ("" otherwise; its
    text may hold any character: "CUDA-capable device(s) is/are busy or unavailable")."""
    match = _CUDA_ERROR_NAME.match(message.strip())
    return match.group("name") if match else ""


def quote_module_message(message: str) -> str:
    """A student module's error message, reduced to what the harness or CUDA would have written."""
    message = message.strip()
    if _NOT_IMPLEMENTED.match(message):
        return message
    if match := _CUDA_ERROR.match(message):
        file = match.group("file").rsplit("/", 1)[-1]
        return f"{match.group('name')} ({match.group('text')}) at {file}:{match.group('line')}"
    return f"the lab threw an exception ({WITHHELD})" if message else "the lab reported an error with no message"
