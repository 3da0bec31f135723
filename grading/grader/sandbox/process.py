"""Running one tool as a subprocess under the grader's own limits, and the report channel of the
untrusted runner and timing worker.

Each run has a wall-clock limit, and runs that report progress a stall limit too (no new report
line for a call's time limit: stopped, a TIMEOUT); the whole process group is killed at either.
The program's own stdout and stderr go to temporary files, not pipes, and the sandbox's file-size
limit stops a flood; only the head and tail of each stream are kept in memory.

The runner and the timing worker report on a channel of their own (grading/runner/wire.hpp): a
pipe whose write end the run inherits (--report-fd), read here live, line by line as it comes, so
nothing the run does later (a destructor, an atexit handler, a child left behind) can rewrite what
it reported, with each line's arrival time (the checker compares a timing run's claimed call
times with the time between its reports); and a second pipe that hands it the run's token (--token-fd) before it loads student
code. What the student's code prints to stdout and stderr never mixes with the report: a banner
without a newline is the student's output, not a broken report line.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import select
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

from ..contract import REPORT_FD_FLAG, TOKEN_FD_FLAG
from .ending import Ending, wait_killed


@dataclass
class ProcessResult:
    """One finished (or killed) subprocess: what the grader itself knows about a run. stdout and
    stderr are the program's own output (a student's printing, for a run of student code)."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False       # the grader's own wall-clock limit killed it
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    timeout_s: float | None = None
    stalled: bool = False         # no output for the stall limit: the grader killed it
    output_limit: bool = False    # it wrote as much as the file-size limit allows (a flood)
    report: str = ""              # its report channel as a transcript: each line as it arrived, after its arrival time
    token: str = ""               # the token that channel's lines must carry
    log: str = ""                 # a sanitizer run's: compute-sanitizer's own log, from its channel (sanitizer_log.py)
    unended: str = ""             # killed, it did not end within the grader's wait (ending.py): what the grader saw


HEAD_BYTES = 2 << 20     # keep the first 2 MiB of a stream (the observations of a test run are far less)
TAIL_BYTES = 256 << 10   # and its last 256 KiB (summaries are at the end)
REPORT_LIMIT = 16 << 20  # a report channel past this is a flood: the run is stopped (a timing run writes ~100 KiB)
POLL_S = 0.2
DRAIN_S = 2.0            # after the run ends, how long a report channel may stay open (a child it left holding it)


def _token_pipe() -> tuple[str, int]:
    """A fresh token and the read end of a pipe that holds it (a line), for a run to inherit."""
    token = secrets.token_hex(16)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, (token + "\n").encode())   # 33 bytes: always fits the pipe's buffer
    os.close(write_fd)
    return token, read_fd


class Token:
    """A token alone on its pipe (a paired run's reference side: its report goes elsewhere)."""

    def __init__(self) -> None:
        self.token, self.fd = _token_pipe()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Token:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# A channel's pipe holds this much (where the system allows it; Linux's default is 64 KiB): a whole
# timing run's report (about 100 KiB) fits, so a run never waits for the grader to read. The reader
# is a Python thread, which may wait tens of milliseconds for the interpreter while the grader's
# other threads work (a class's outputs, other students' runs); a timekeeper whose write to a full
# pipe waited meanwhile would read its worker's next report late, and the call would look slower
# on its clock than it was (benchmark.py, clock_problem).
CHANNEL_PIPE_BYTES = 1 << 20


def roomy_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) of CHANNEL_PIPE_BYTES where the system allows it, else as made."""
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError, AttributeError):   # over /proc/sys/fs/pipe-max-size, or not Linux
        fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, CHANNEL_PIPE_BYTES)
    return read_fd, write_fd


class Channel:
    """The report channel of one run: `argv()` names the two pipe ends the run inherits."""

    def __init__(self, token: bool = True) -> None:
        """`token`: False for a channel without one (compute-sanitizer's log: sanitizer_log.py)."""
        self.token, self.token_fd = _token_pipe() if token else ("", -1)
        self.read_fd, self.write_fd = roomy_pipe()
        self._child_ends = [self.write_fd] + ([self.token_fd] if token else [])

    def argv(self) -> list[str]:
        return [f"{REPORT_FD_FLAG}={self.write_fd}", f"{TOKEN_FD_FLAG}={self.token_fd}"]

    def pass_fds(self) -> tuple[int, ...]:
        return tuple(self._child_ends)

    def started(self) -> None:
        """The run has its copies: the grader's must go, or the channel never reaches end of file."""
        for fd in self._child_ends:
            os.close(fd)
        self._child_ends = []

    def close(self) -> None:
        self.started()
        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _read_limited(handle) -> str:
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(0)
    if size <= HEAD_BYTES + TAIL_BYTES:
        data = handle.read()
    else:
        head = handle.read(HEAD_BYTES)
        handle.seek(size - TAIL_BYTES)
        data = head + f"\n[... {size - HEAD_BYTES - TAIL_BYTES} bytes left out ...]\n".encode() + handle.read()
    return data.decode("utf-8", errors="replace")


_LIVE: set[int] = set()  # process groups running now, for kill_all()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()


class Stopping(Exception):
    """The grader is being stopped: no new process starts."""


def stopping() -> bool:
    """kill_all() was called: the runs since may have been killed, and say nothing of the student."""
    return _STOPPING.is_set()


def kill_all() -> None:
    """Kills every process group the grader started that is still running, and lets no new one
    start (on SIGTERM or Ctrl-C). Sandboxed runs die with their bubblewrap parent."""
    _STOPPING.set()
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for pid in groups:
        _kill_group(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def timing_core() -> int:
    """The core a host lab is timed on: the last one this grader may use (the same for every run)."""
    return max(os.sched_getaffinity(0))


def pinned(preexec, cpu: int | None):
    """`preexec` (for Popen) that first keeps the child, and all it starts, on core `cpu` (None: anywhere)."""
    if cpu is None:
        return preexec

    def pin_then_preexec() -> None:
        os.sched_setaffinity(0, {cpu})
        if preexec:
            preexec()
    return pin_then_preexec


class _Report:
    """What arrived on a channel so far, as a transcript (contract.json "transcript"): each line
    prefixed by when it arrived, in microseconds since the run started, and a space."""

    def __init__(self, channel: Channel | None, start: float) -> None:
        self.fd = channel.read_fd if channel else -1
        self.start = start
        self.size = 0
        self.transcript = bytearray()
        self.pending = b""
        self.open = channel is not None
        self.flood = False

    def _stamp(self, line: bytes) -> None:
        self.transcript += b"%d " % round((time.monotonic() - self.start) * 1e6) + line + b"\n"

    def read(self, wait_s: float) -> bool:
        """Reads what is there (waiting up to `wait_s` for it); True when something arrived."""
        if not self.open:
            return False
        ready, _, _ = select.select([self.fd], [], [], wait_s)
        if not ready:
            return False
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.close()
            return False
        self.size += len(chunk)
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for line in lines:
            self._stamp(line)
        if self.size > REPORT_LIMIT:
            self.flood = True
            self.close()
        return True

    def close(self) -> None:
        if self.pending:
            self._stamp(self.pending)   # a last line without its newline (a crash in the middle of a write)
            self.pending = b""
        self.open = False


def run_process(command: list[str], timeout: float | None, env: dict[str, str] | None = None,
                cwd: str | os.PathLike | None = None, preexec=None, stall_s: float | None = None,
                output_limit: int | None = None, channel: Channel | None = None,
                pass_fds: tuple[int, ...] = (), ending: Ending | None = None) -> ProcessResult:
    """Runs `command` in a new process group with exactly `env` (None: the grader's own); kills the
    group when `timeout` seconds pass, or `stall_s` pass with no progress: a new report line when
    the run has a `channel` (the student's own printing keeps nothing alive), else any output.
    The run inherits the channel's descriptors and `pass_fds` (the sandbox's seccomp filter). A
    sandboxed run's `ending` kills what it left outside its group and frees a killed run its CPU
    share starves (ending.py): the wait for a killed run is bounded."""
    if _STOPPING.is_set():
        raise Stopping("the grader is stopping")
    start = time.monotonic()
    report = _Report(channel, start)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = _start_in_new_session(command, out, err, env, cwd, preexec, pass_fds, channel)
        except (OSError, subprocess.SubprocessError) as exc:   # the latter: `preexec` failed (a cgroup, a core)
            return ProcessResult(127, "", f"cannot start {command[0]}: {exc}", False, 0.0, list(command), timeout)
        with _LIVE_LOCK:
            _LIVE.add(process.pid)
        try:
            timed_out, stalled = _watch_until_limit(process, start, timeout, stall_s, report, channel is not None,
                                                    out, err)
        except BaseException:  # Ctrl-C: leave nothing running behind
            _kill_group(process.pid)
            wait_killed(process, _kill_group, ending)
            raise
        finally:
            _kill_group(process.pid)  # the limit, or anything the run left in its group
            unended = wait_killed(process, _kill_group, ending)
            with _LIVE_LOCK:
                _LIVE.discard(process.pid)
        _drain_report(report)
        flood = report.flood or (output_limit is not None and max(os.fstat(out.fileno()).st_size,
                                                                   os.fstat(err.fileno()).st_size) >= output_limit)
        return ProcessResult(process.returncode, _read_limited(out), _read_limited(err), timed_out,
                             time.monotonic() - start, list(command), timeout, stalled, flood,
                             report=report.transcript.decode("utf-8", errors="replace") if channel else "",
                             token=channel.token if channel else "", unended=unended)


def _start_in_new_session(command: list[str], out, err, env: dict[str, str] | None, cwd: str | os.PathLike | None,
                          preexec, pass_fds: tuple[int, ...], channel: Channel | None) -> subprocess.Popen:
    """`command` started in a session (and process group) of its own, its output to `out` and `err`.
    The grader's copies of the channel's child ends are closed whether or not it started: the run
    holds its own, and the channel reaches end of file only when no writer is left."""
    try:
        return subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                start_new_session=True, preexec_fn=preexec,
                                pass_fds=(*pass_fds, *(channel.pass_fds() if channel else ())))
    finally:
        if channel:
            channel.started()


def _watch_until_limit(process: subprocess.Popen, start: float, timeout: float | None, stall_s: float | None,
                       report: _Report, by_report: bool, out, err) -> tuple[bool, bool]:
    """Reads the report while the run goes on, until it ends, passes `timeout`, makes no progress
    for `stall_s` (`by_report`: a new report line, else any output) or floods its channel.
    Returns (timed out, stalled); the caller kills the group either way."""
    size, changed = 0, start
    while process.poll() is None:
        now = time.monotonic()
        if timeout is not None and now - start > timeout:
            return True, False
        if by_report:
            grown = report.size
        else:
            grown = os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
        if grown != size:
            size, changed = grown, now
        elif stall_s is not None and now - changed > stall_s:
            return False, True
        if report.flood:
            break
        if report.open:
            report.read(POLL_S)   # returns at once when a line (or the end of the channel) comes
        else:
            try:
                process.wait(timeout=POLL_S)  # returns at once when the run ends
            except subprocess.TimeoutExpired:
                pass
    return False, False


def _drain_report(report: _Report) -> None:
    """What the run wrote before it ended, for up to DRAIN_S (a child it left may hold the channel open)."""
    drained = time.monotonic() + DRAIN_S
    while report.open and time.monotonic() < drained:
        report.read(max(0.0, drained - time.monotonic()))
    report.close()
