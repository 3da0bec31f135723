"""A uid of its own for every sandboxed run, so that the process limit binds each run alone.

RLIMIT_NPROC counts every process of the run's real uid on the machine. With one uid for every run,
one student's fork bomb held the slots of every run graded beside it (classmates' tests failed with
"Resource temporarily unavailable", their nvcc could not fork). With a uid per run, a run can only
exhaust its own slots.

The uids come from RUN_UIDS, below 65536 so that they exist where a container maps only the first
65536 uids, and outside the range a distribution gives to users. A uid is leased with an exclusive
flock on its lock file in a folder only root can enter (/run: never in a sandbox's view), so that
the grader processes of one host (`--gpus` workers, `--shard` graders) and the threads of each never
share one. Before a uid is handed out, any process still running as it is killed (the range is the
grader's alone: a process of it outside a run is a leftover); uids that have a name in the user
database are never used.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import pwd
import re
import signal
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

RUN_UIDS = range(65000, 65534)   # one definition: the sandbox and examples/check_class.py use it
SHARED_UID = 65534               # nobody: every run's uid when the range cannot be used
LOCK_FOLDER = Path("/run/reduction-labs-uids")
WAIT_S = 120.0                   # for a free uid, when every one is leased (more runs than uids at once)
KILL_WAIT_S = 2.0
_UID_LINE = re.compile(rb"^Uid:\s+(.*)$", re.MULTILINE)
_ZOMBIE = re.compile(rb"^State:\s+Z", re.MULTILINE)


def describe_users(uids: range | None, why: str = "") -> str:
    """How a sandbox's description names its runs' uids: `uids` (a uid of it per run) or, when None,
    SHARED_UID for every run, and why."""
    return f"uid per run ({uids.start}-{uids.stop - 1})" if uids is not None else f"uid {SHARED_UID} for every run ({why})"


def uids_described(description: str) -> set[int]:
    """The uids a sandbox description (describe_users()'s text in it) says its runs had."""
    if match := re.search(r"uid per run \((\d+)-(\d+)\)", description):
        return set(range(int(match.group(1)), int(match.group(2)) + 1))
    return {SHARED_UID} if f"uid {SHARED_UID} for every run" in description else set()


@dataclass(frozen=True)
class RunUser:
    """Who one sandboxed run is (its gid is its uid: no group shared with another run either)."""
    uid: int
    gid: int


def _uids_of(pid: int | str) -> set[int]:
    """The real, effective, saved and file-system uids of a running process (none when it is gone, or a
    zombie: that runs nothing and cannot be killed, it waits for its parent)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            status = handle.read()
    except OSError:
        return set()
    match = _UID_LINE.search(status)
    if not match or _ZOMBIE.search(status):
        return set()
    return {int(uid) for uid in match.group(1).split()}


def processes_of(uids: range | set[int]) -> list[int]:
    """The pids of every running process that has a uid in `uids` (real, effective, saved or file-system)."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and any(u in uids for u in _uids_of(name))]


def _kill(pid: int, uid: int) -> None:
    """SIGKILL to `pid` if it still runs as `uid` (through a pidfd: never to a process that took its pid since)."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except OSError:   # a kernel without pidfds (before 5.3): a plain kill, just after checking its uid
        if uid in _uids_of(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return
    try:
        if uid in _uids_of(pid):
            signal.pidfd_send_signal(descriptor, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def kill_processes_of(uid: int) -> list[int]:
    """SIGKILL to every process running as `uid` now (a run's leftovers, with what it started in
    sessions and namespaces of its own, outside the process group the grader kills); their pids."""
    found = processes_of({uid})
    for pid in found:
        _kill(pid, uid)
    return found


def _private_folder(path: Path) -> Path:
    """`path`, made if missing: a folder (not a link) of this process's user that no one else may enter."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise OSError(f"{path} is not a folder of uid {os.geteuid()}")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


class UidPool:
    """Leases the uids of `uids` that have no name, one run at a time each, across processes."""

    def __init__(self, uids: range = RUN_UIDS, folder: Path = LOCK_FOLDER):
        self.range = uids
        self.folder = _private_folder(folder)
        named = {entry.pw_uid for entry in pwd.getpwall()}
        self.uids = [uid for uid in uids if uid not in named]
        if not self.uids:
            raise OSError(f"every uid of {self.describe()} has a name in the user database")
        self._next = itertools.count(os.getpid() * 7919)  # where this process starts looking

    def describe(self) -> str:
        return f"{self.range.start}-{self.range.stop - 1}"

    @contextlib.contextmanager
    def lease(self, wait_s: float = WAIT_S) -> Iterator[RunUser]:
        """A uid no other run holds and no process runs as, for the `with` block."""
        descriptor, uid = self._acquire(wait_s)
        try:
            yield RunUser(uid, uid)
        finally:
            os.close(descriptor)   # releases the flock

    def _acquire(self, wait_s: float) -> tuple[int, int]:
        deadline = time.monotonic() + wait_s
        while True:
            start = next(self._next)
            for step in range(len(self.uids)):
                uid = self.uids[(start + step) % len(self.uids)]
                descriptor = os.open(self.folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                                     0o600)
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:   # another run holds it
                    os.close(descriptor)
                    continue
                if self._clear(uid):
                    return descriptor, uid
                os.close(descriptor)
            if time.monotonic() > deadline:
                raise RuntimeError(f"no free sandbox uid in {self.describe()} for {wait_s:g} s")
            time.sleep(0.05)

    @staticmethod
    def _clear(uid: int) -> bool:
        """True when no process runs as `uid`, after killing those that did."""
        if not kill_processes_of(uid):
            return True
        deadline = time.monotonic() + KILL_WAIT_S
        while time.monotonic() < deadline:
            if not processes_of({uid}):
                return True
            time.sleep(0.02)
        return False   # one that does not die (in uninterruptible sleep, say): leave that uid alone
