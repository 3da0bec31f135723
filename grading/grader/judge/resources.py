"""Did a run fail because a resource that every run on the machine shares ran out?

The students graded at the same time share the GPU's memory, the host's memory and the machine's
process table, and no per-run limit bounds the sum of all runs. A compile, test or sanitizer run
that failed that way while another student's runs shared the machine is run again alone
(engine.py), and the retry's outcome is the verdict. This module only says whether a failure looks
like that: a pure function of what the grader itself saw of the run (the exit status, its own
limits), of the trusted checker's report, and for a compile of the compiler's own lines.

A run that timed out (the grader's own limits, or the runner's watchdog) is TIMED_OUT: it was run
again alone when the other students' runs held the cores while it ran, by the evidence of their
cgroups' CPU time where there are cgroups, or else when another student's runs ran beside it
(cpu_share.held, engine.py). A student's own runs side by side are no classmate's doing.

What a student can do with it: make its *own* run look like one (throw std::bad_alloc, kill itself
with SIGKILL, have its compile or its sanitizer run print such a line). That run is then run again
alone: it costs the class time (at most [pipeline] retry_alone_s per student) and gains the student
nothing, because the retry's outcome stands and a lab passes only when the retry passes every case
itself. Nothing can make another student's run look like one: each judgment reads one run's own
result. A test run's printed output (the runner's stdout and stderr) is read only when nothing at
all arrived on its report channel (process.py: the grader's own reading), and then only a first line in the shape of the sandbox launcher's
error (bubblewrap or setpriv could not start it). A sanitizer run is read on compute-sanitizer's own
log (sanitizer_log.py), never on what the program printed; the program can still add lines to that
log through /proc (its own retry, as above). A sanitizer run whose result is unreadable (no
summary, a summary its exit status contradicts, a status neither 0 nor 99, a log not in the tool's
shape) counts too: racecheck and synccheck name no failed CUDA call, a tool short of memory fails
in words of its own, and the lab passed its tests before it was sanitized.

The CUDA errors that count, by name (cudaGetErrorName, in the shape the harness's REDUCTION_CHECK
writes, which checks.cuda_error_name reads):
- cudaErrorMemoryAllocation ("out of memory"): device memory is one pool for every process on the
  GPU (and a failed pinned host allocation has the same name);
- cudaErrorLaunchTimeout: the watchdog of a GPU that drives a display; a kernel time-sliced with
  other processes' kernels runs longer than it would alone;
- cudaErrorDevicesUnavailable: the GPU is in exclusive-process mode and another process held it;
- cudaErrorMpsMaxClientsReached, cudaErrorMpsMaxConnectionsReached: under MPS the server's client
  slots are shared by every process.
Not counted: cudaErrorInsufficientDriver (the driver is older than the runtime: every run fails
alike, alone too; a problem of the machine that a retry only makes slower), cudaErrorNoDevice and
cudaErrorInitializationError (the machine), cudaErrorLaunchOutOfResources and
cudaErrorCooperativeLaunchTooLarge (one launch's own registers, shared memory or blocks: the same
alone), and the errors of a kernel's own doing (cudaErrorIllegalAddress, ...).
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from ..contract import RUNNER_EXIT_RUNTIME_ERROR
from ..sandbox.process import ProcessResult
from .checks import TestCheck, cuda_error_name
from .sanitizer_findings import why_unreadable
from .sanitizer_log import PREFIX, has_summary

COMPILE, TEST, SANITIZER = "compile", "test", "sanitizer"


@dataclass(frozen=True)
class ResourceFailure:
    cause: str       # what ran out, as the note says it: "out of memory (cudaErrorMemoryAllocation)"
    gpu_only: bool   # a resource of the GPU: only other runs on the GPU share it (else the host's: every run)
    cores: bool = False   # the run timed out: the cores, if the others held them (cpu_share.held)
    short_limit: bool = False   # a call timed out under a limit shortened for its small input (call_limit.py)


# A run the grader's own limits stopped (its wall clock, no progress for a call's limit, the runner's
# watchdog) timed out; whether that is a classmate's doing is for the evidence of the cores to say.
TIMED_OUT = ResourceFailure("timed out", False, cores=True)
# A call's limit shortened for a small input (call_limit.py) ran out while another student's runs
# ran beside it: run again alone, whatever the cores say (the GPU's time slices are shared too).
SHORT_LIMIT_TIMED_OUT = ResourceFailure("timed out under a call limit shortened for a small input", False,
                                        short_limit=True)


_CUDA_ERRORS = {
    "cudaErrorMemoryAllocation": ResourceFailure("out of memory (cudaErrorMemoryAllocation)", False),
    "cudaErrorLaunchTimeout": ResourceFailure("a launch timed out (cudaErrorLaunchTimeout)", True),
    "cudaErrorDevicesUnavailable": ResourceFailure("the GPU was busy (cudaErrorDevicesUnavailable)", True),
    "cudaErrorMpsMaxClientsReached": ResourceFailure("no free MPS client (cudaErrorMpsMaxClientsReached)", True),
    "cudaErrorMpsMaxConnectionsReached": ResourceFailure("no free MPS connection (cudaErrorMpsMaxConnectionsReached)",
                                                         True),
}
_ERRNO_TEXTS = {   # strerror(EAGAIN) and strerror(ENOMEM): a fork, a thread or an allocation refused
    "Resource temporarily unavailable": ResourceFailure("no free process (Resource temporarily unavailable)", False),
    "Cannot allocate memory": ResourceFailure("out of host memory (Cannot allocate memory)", False),
}
_BAD_ALLOC = ResourceFailure("out of host memory (std::bad_alloc)", False)
_KILLED = ResourceFailure("killed by SIGKILL, which the grader did not send (the out-of-memory killer?)", False)
_COMPILER_PHRASES = (  # in the compiler driver's own lines (nvcc, gcc, cicc, ptxas, sh)
    ("Failed to preprocess host compiler properties",
     ResourceFailure("nvcc could not run the host compiler (Failed to preprocess host compiler properties)", False)),
    ("died due to signal 9", ResourceFailure("a compiler pass was killed (SIGKILL: the out-of-memory killer?)", False)),
    ("Killed signal terminated program",
     ResourceFailure("a compiler pass was killed (SIGKILL: the out-of-memory killer?)", False)),
    ("Cannot fork", ResourceFailure("no free process (cannot fork)", False)),
    ("cannot fork", ResourceFailure("no free process (cannot fork)", False)),
    ("virtual memory exhausted", ResourceFailure("out of host memory (virtual memory exhausted)", False)),
    ("std::bad_alloc", _BAD_ALLOC),
    ("out of memory", ResourceFailure("out of host memory", False)),
    *_ERRNO_TEXTS.items(),
)
# A diagnostic about a source file ("x.cu(12): ...", "x.cu:12:5: ...") or a quoted source line (indented):
# text a student's source can put there, never the driver's own words.
_LOCATED = re.compile(r"^\S+?(\(\d+\)|:\d+(:\d+)?):")
_LAUNCHERS = ("bwrap: ", "setpriv: ", "cannot start ")   # the sandbox's launchers; run_process's own words
# racecheck and synccheck do not report a failed CUDA call: beside a student holding the GPU's
# memory, an honest lab's racecheck and synccheck runs ended with the runner's runtime-error status
# and no summary, while its memcheck run named cudaErrorMemoryAllocation (H100, 2026-11-25). The
# lab passed its tests, so under the tool it hit an error it does not hit alone, or it will again.
# Any other result that cannot be read is run again alone the same way: the tool, short of GPU
# memory beside a hog, fails in its own words, which no list here can know in advance.
_ERROR_UNDER_THE_TOOL = ResourceFailure("the program under compute-sanitizer ended with a CUDA error or exception "
                                        "and no summary (the tool does not name the error)", True)
_UNREADABLE = "compute-sanitizer's result could not be read ({})"
_PROGRAM_HIT = re.compile(r"^Program hit (cuda[A-Za-z]+)\b")


def resource_failure(step: str, run: ProcessResult, check: TestCheck | None = None) -> ResourceFailure | None:
    """For a run of `step` (COMPILE, TEST with its checker's `check`, SANITIZER) whose outcome is not
    a pass: the shared resource that ran out, as far as the run shows it, or None."""
    if run.timed_out or run.stalled or run.output_limit:   # the grader's own limits ended it
        return None
    if step == COMPILE:
        found = _compile(run)
    elif step == TEST:
        found = _test(run, check)
    elif step == SANITIZER:
        found = _sanitizer(run)
    else:
        raise ValueError(f"unknown step {step!r}")
    found = found or (_KILLED if run.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL) else None)
    return found or (_unreadable(run) if step == SANITIZER else None)


# In every retry note (lab_flags.py finds retries by it in records graded before flags were recorded).
RETRIED = "while other students' runs shared the"


def retry_note(what: str, failure: ResourceFailure, where: str, then: str) -> str:
    """The lab's note on a run harmed by a shared resource (`what`: "test run", ...; `where`: "GPU" or
    "machine", or for a timeout the evidence that the others held the cores; `then`: "run again
    alone: PASSED", ...)."""
    if failure.cores:
        return f"the first {what} timed out while other students' runs held the cores ({where}); {then}"
    if failure.short_limit:
        return f"the first {what} {failure.cause} {RETRIED} {where}; {then}"
    return f"the first {what} failed for a resource ({failure.cause}) {RETRIED} {where}; {then}"


def _message(message: str) -> ResourceFailure | None:
    """A message the runner reported (an exception's what(), a CUDA error in the harness's shape)."""
    message = message.strip().rstrip(".")
    if name := cuda_error_name(message):
        return _CUDA_ERRORS.get(name)
    if message == "std::bad_alloc":
        return _BAD_ALLOC
    return next((failure for text, failure in _ERRNO_TEXTS.items()
                 if message == text or message.endswith(" " + text)), None)


def _test(run: ProcessResult, check: TestCheck | None) -> ResourceFailure | None:
    if check is None:   # the checker could not read the run: a grader problem, said so
        return None
    for message in (check.error_message, check.load_error):
        if message and (found := _message(message)):
            return found
    nothing_seen = not run.report.strip() and check.observed == 0 and not (
        check.end or check.last_started or check.error_message or check.load_error or check.refused)
    if nothing_seen:
        first = next((line.strip() for line in run.stderr.splitlines() if line.strip()), "")
        if first.startswith(_LAUNCHERS):
            return _message(first)
    return None


def _compile(run: ProcessResult) -> ResourceFailure | None:
    for line in (run.stdout + "\n" + run.stderr).splitlines():
        if not line or line[0].isspace() or _LOCATED.match(line):
            continue
        for phrase, failure in _COMPILER_PHRASES:
            if phrase in line:
                return failure
    return None


def _sanitizer(run: ProcessResult) -> ResourceFailure | None:
    """The tool's own words in its log, never the program's printing (an unreadable result: _unreadable)."""
    for line in run.log.splitlines():
        if not line.startswith(PREFIX):
            continue
        body = line[len(PREFIX):].strip()
        if match := _PROGRAM_HIT.match(body):
            if found := _CUDA_ERRORS.get(match.group(1)):
                return found
        elif "out of memory" in body.lower():
            return ResourceFailure("out of memory (compute-sanitizer)", False)
        elif found := next((f for text, f in _ERRNO_TEXTS.items() if text in body), None):
            return found
    if run.returncode == RUNNER_EXIT_RUNTIME_ERROR and not has_summary(run.log):
        return _ERROR_UNDER_THE_TOOL
    return None


def _unreadable(run: ProcessResult) -> ResourceFailure | None:
    why = why_unreadable(run)
    return ResourceFailure(_UNREADABLE.format(why[:200]), True) if why else None
