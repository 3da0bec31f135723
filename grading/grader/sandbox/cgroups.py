"""The cgroup file system, for the CPU share of each student (cpu_share.py): which layout this
machine has, a grader's own subtree in it, and the few files the share reads and writes.

Two layouts, detected from /proc/self/mounts:
- cgroup v2: one tree (the cgroup2 mount whose root offers the `cpu` controller). A cgroup that
  enables controllers for its children may hold no process itself (the no-internal-processes
  rule; the root is exempt), so the grader stays where it is and only its children move: its
  subtree's inner folders hold none, each run joins a leaf;
- cgroup v1: a tree per controller, `cpu` (the quota and the weight), `cpuacct` (the CPU time,
  often mounted with `cpu`) and `cpuset`; a run joins its folder in each.

Every grader of the machine (the `--gpus` workers, `--shard` graders, a CI job beside a grading)
has a subtree of its own, named by its pid and the pid's start time, under one shared folder
(ROOT_NAME) beside the grader's own cgroup in each tree (base()): no two graders ever write the
same cgroup, and a subtree whose process is gone is a dead grader's leftover, which the next
grader removes (`sweep`).

The file system is reached through `Fs`, so that tests can give it a tree of plain folders that
behaves as the kernel's does where it matters (cgroup_fixtures in the tests).
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT_NAME = "reduction-grading"
PERIOD_US = 100_000            # the quota's period (the kernel's default): 100 ms
V2_WEIGHT, V2_WEIGHT_MAX = 100, 10_000          # cpu.weight: the default and the largest
V1_SHARES, V1_SHARES_MAX = 1024, 262_144        # cpu.shares: the default and the largest
KILL_WAIT_S = 2.0              # how long a leftover's processes may take to die before its folder goes


class CgroupError(OSError):
    """A cgroup could not be made, written or read; its message says which file and why."""


class Fs:
    """The kernel's cgroup file system (tests pass a stand-in)."""

    def read(self, path: Path) -> str:
        return path.read_text(encoding="ascii", errors="replace")

    def write(self, path: Path, text: str) -> None:
        descriptor = os.open(path, os.O_WRONLY)   # no O_CREAT: a control file the kernel lacks is an error
        try:
            os.write(descriptor, text.encode("ascii"))
        finally:
            os.close(descriptor)

    def mkdir(self, path: Path) -> None:
        path.mkdir(exist_ok=True)

    def rmdir(self, path: Path) -> None:
        os.rmdir(path)   # a cgroup's control files go with it; it fails while processes or children are there


@dataclass(frozen=True)
class Trees:
    """Where the graders' subtrees go, per controller: the folder (a cgroup) under which ROOT_NAME is
    made. v2 has one tree for all; v1 one per controller (two may coincide)."""
    version: int                 # 2 or 1
    cpu: Path                    # the quota and the weight
    usage: Path | None           # the CPU time (v2: cpu; v1: cpuacct's tree), None: not mounted
    cpuset: Path | None          # the cores; None: no cpuset controller here
    mount: Path | None = None    # v2: the tree's root, from which the controllers are enabled down to `cpu`
    own: Path | None = None      # the grader's own cgroup in the cpu tree: where a starved, killed run goes (ending.py)
    freezer: Path | None = None  # the freezer (v2: the cpu tree's; v1: its own tree), None: not mounted

    def all(self) -> tuple[Path, ...]:
        """Each tree once."""
        return tuple(dict.fromkeys(p for p in (self.cpu, self.usage, self.cpuset, self.freezer) if p is not None))


def own_cgroups(text: str) -> dict[str, str]:
    """This process's cgroups from /proc/self/cgroup: per v1 controller ("cpu": "/a/b"), "" for v2."""
    paths = {}
    for line in text.splitlines():
        fields = line.split(":", 2)
        if len(fields) == 3:
            for controller in fields[1].split(",") if fields[1] else [""]:
                paths[controller] = fields[2]
    return paths


def own_folder(mount: Path, own: str | None) -> Path | None:
    """The grader's own cgroup in a tree mounted at `mount` (None where its path is not a plain one)."""
    parts = (own or "").split("/")
    if not (own or "").startswith("/") or ".." in parts:
        return None
    return mount.joinpath(*[part for part in parts[1:] if part])


def base(mount: Path, own: str | None) -> Path:
    """Where a grader's subtree goes in a tree mounted at `mount`: beside the grader's own cgroup (in
    its parent), so that the students' runs stay inside what holds the grader (a Slurm job, a
    systemd slice, a cgroup's limits); the tree's root where the grader is there, or is elsewhere."""
    folder = own_folder(mount, own)
    return mount if folder is None or folder == mount else folder.parent


def _unescape(field: str) -> str:
    """A /proc/self/mounts field: spaces, tabs, newlines and backslashes are octal escapes there."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def detect(mounts: str, fs: Fs | None = None, own: str = "") -> Trees | str:
    """The trees to use, from the text of /proc/self/mounts and of /proc/self/cgroup (`own`), or why
    there are none: cgroup v2 where a cgroup2 mount offers the cpu controller, else v1's cpu tree
    (with cpuacct, cpuset and freezer where mounted)."""
    fs, mine = fs or Fs(), own_cgroups(own)
    v1: dict[str, tuple[Path, bool]] = {}
    own_cpu: Path | None = None
    read_only = []
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        where, kind, options = Path(_unescape(fields[1])), fields[2], fields[3].split(",")
        if kind == "cgroup2":
            try:
                offered = fs.read(where / "cgroup.controllers").split()
            except OSError:
                continue
            if "cpu" in offered:
                if "ro" in options:
                    read_only.append(str(where))
                    continue
                folder = base(where, mine.get(""))
                return Trees(2, folder, folder, folder if "cpuset" in offered else None, where,
                             own_folder(where, mine.get("")), folder)
        elif kind == "cgroup":
            for controller in ("cpu", "cpuacct", "cpuset", "freezer"):
                if controller in options:
                    v1.setdefault(controller, (base(where, mine.get(controller)), "ro" in options))
            if "cpu" in options and own_cpu is None:
                own_cpu = own_folder(where, mine.get("cpu"))
    if "cpu" in v1:
        cpu, ro = v1["cpu"]
        if ro:
            return f"the cgroup tree {cpu} is read-only"
        usable = {name: path for name, (path, ro) in v1.items() if not ro}
        return Trees(1, cpu, usable.get("cpuacct"), usable.get("cpuset"), own=own_cpu, freezer=usable.get("freezer"))
    if read_only:
        return f"the cgroup tree {read_only[0]} is read-only"
    return "no cgroup tree with the cpu controller is mounted"


def own_name(pid: int | None = None) -> str:
    """This process's subtree name: its pid and start time, so a reused pid is not taken for it."""
    pid = os.getpid() if pid is None else pid
    return f"g{pid}-{_start_time(pid)}"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), "" when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()   # the command name, in parentheses, may hold spaces
    return fields[19] if len(fields) > 19 else ""


def alive(name: str) -> bool:
    """Whether the grader a subtree name (own_name) stands for is still running."""
    pid, _, start = name[1:].partition("-")
    return name.startswith("g") and pid.isdigit() and start != "" and _start_time(int(pid)) == start


def cpu_list(cores) -> str:
    """The kernel's list syntax for a set of cores: {0, 1, 2, 5} -> "0-2,5"."""
    ranges: list[list[int]] = []
    for core in sorted(set(cores)):
        if ranges and core == ranges[-1][1] + 1:
            ranges[-1][1] = core
        else:
            ranges.append([core, core])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def parse_cpu_list(text: str) -> set[int]:
    """"0-2,5" -> {0, 1, 2, 5}; "" -> set()."""
    cores: set[int] = set()
    for part in text.strip().split(","):
        if part:
            first, _, last = part.partition("-")
            cores.update(range(int(first), int(last or first) + 1))
    return cores


def processes(fs: Fs, folder: Path) -> list[int]:
    try:
        return [int(line) for line in fs.read(folder / "cgroup.procs").split() if line.isdigit()]
    except OSError:
        return []


def remove(fs: Fs, folder: Path) -> bool:
    """Removes a cgroup and everything under it, deepest first, killing what still runs there (it
    is the grader's own, or a dead grader's: student runs it could not end). True when it is gone."""
    if not folder.is_dir():
        return True
    try:
        children = sorted((p for p in folder.iterdir() if p.is_dir()), reverse=True)
    except FileNotFoundError:   # removed meanwhile: its grader closing, or another grader sweeping it
        return True
    for child in children:
        remove(fs, child)
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        try:
            fs.rmdir(folder)
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            left = processes(fs, folder)
            if exc.errno not in (errno.EBUSY, errno.ENOTEMPTY) or time.monotonic() > deadline:
                return False
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)


def sweep(fs: Fs, trees: Trees) -> list[str]:
    """Removes the subtrees of graders that are gone (a grader killed before it cleaned up); returns
    their names. A live grader's subtree is never touched."""
    removed = []
    for tree in trees.all():
        shared = tree / ROOT_NAME
        if not shared.is_dir():
            continue
        for subtree in sorted(p for p in shared.iterdir() if p.is_dir()):
            if not alive(subtree.name) and remove(fs, subtree) and subtree.name not in removed:
                removed.append(subtree.name)
    return removed


def write(fs: Fs, path: Path, text: str) -> None:
    try:
        fs.write(path, text)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot write {text.strip()!r} to {path}: {exc.strerror or exc}") from exc


def make(fs: Fs, path: Path) -> None:
    try:
        fs.mkdir(path)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot make the cgroup {path}: {exc.strerror or exc}") from exc


def usage_seconds(fs: Fs, trees: Trees, folder: Path) -> float | None:
    """The CPU time of everything that ran in a cgroup (its `usage` tree's folder) so far, or None."""
    try:
        if trees.version == 2:
            for line in fs.read(folder / "cpu.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
            return None
        return int(fs.read(folder / "cpuacct.usage").strip()) / 1e9
    except (OSError, ValueError):
        return None


def joiner(folders: tuple[Path, ...]):
    """A function for a child between fork and exec that moves it into `folders` (one per tree):
    os calls only, no lock, nothing allocated but the pid's text. A failure raises, and Popen
    then raises in the grader: a run never goes on outside its share unnoticed."""
    paths = [os.fsencode(folder / "cgroup.procs") for folder in folders]

    def join() -> None:
        pid = str(os.getpid()).encode("ascii")
        for path in paths:
            descriptor = os.open(path, os.O_WRONLY)
            try:
                os.write(descriptor, pid)
            finally:
                os.close(descriptor)
    return join
