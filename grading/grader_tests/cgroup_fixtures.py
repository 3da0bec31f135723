"""Made-up cgroup trees in a temporary folder, v1 and v2, and a file system over them that keeps the
kernel's rules the grader depends on (grader/sandbox/cgroups.py): a cgroup's control files appear with it;
a control file is never created by a write; a folder with processes or child cgroups cannot be
removed; v2's no-internal-processes rule (no controller for the children of a cgroup with
processes, but for the root)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

from grader.sandbox.cgroups import Fs

V2_FILES = {"cgroup.procs": "", "cgroup.subtree_control": "", "cgroup.controllers": "cpuset cpu io memory pids\n",
            "cpu.max": "max 100000\n", "cpu.weight": "100\n", "cpu.stat": "usage_usec 0\nuser_usec 0\n",
            "cpuset.cpus": "", "cpuset.cpus.effective": "", "cgroup.freeze": "0\n", "cgroup.events": "populated 0\nfrozen 0\n"}
V1_FILES = {"cgroup.procs": "", "tasks": "", "cpu.cfs_period_us": "100000\n", "cpu.cfs_quota_us": "-1\n",
            "cpu.shares": "1024\n", "cpuacct.usage": "0\n", "cpuset.cpus": "", "cpuset.mems": "",
            "cpuset.effective_cpus": "", "freezer.state": "THAWED\n"}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class FakeFs(Fs):
    """The kernel's rules over plain folders; `writes` keeps every write, in order."""

    def __init__(self, files: dict[str, str], roots: tuple[Path, ...], namespaced: bool = False):
        self.files, self.roots, self.namespaced = files, roots, namespaced
        self.lock = threading.RLock()   # each call is one step, as a system call on the kernel's tree is
        self.writes: list[tuple[Path, str]] = []
        self.refuse: dict[str, int] = {}   # a file name whose writes fail with this errno

    def populate(self, folder: Path, cpus: str, mems: str = "0") -> None:
        """A cgroup's control files as the kernel shows them (a new v1 cpuset has no cores, no nodes)."""
        for name, text in self.files.items():
            value = {"cpuset.mems": mems + "\n"}.get(name, cpus + "\n" if "cpus" in name else text)
            (folder / name).write_text(value, encoding="ascii")

    def mkdir(self, path: Path) -> None:
        with self.lock:
            try:
                path.mkdir()
            except FileExistsError:
                return
            self.populate(path, cpus="", mems="")

    def write(self, path: Path, text: str) -> None:
        with self.lock:
            self._write(path, text)

    def _write(self, path: Path, text: str) -> None:
        if path.name in self.refuse:
            raise OSError(self.refuse[path.name], os.strerror(self.refuse[path.name]))
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        root = path.parent in self.roots and not self.namespaced
        if path.name == "cgroup.subtree_control" and not root and self.pids(path.parent):
            raise OSError(errno.EBUSY, "Device or resource busy")
        self.writes.append((path, text))
        if path.name == "cgroup.subtree_control":   # "+cpu" adds to what is shown: "cpu cpuset"
            shown = path.read_text(encoding="ascii").split()
            text = " ".join(sorted(set(shown) | {text[1:]} if text[0] == "+" else set(shown) - {text[1:]}))
        path.write_text(text + "\n", encoding="ascii")

    def pids(self, folder: Path) -> list[int]:
        text = (folder / "cgroup.procs").read_text(encoding="ascii") if (folder / "cgroup.procs").exists() else ""
        return [int(pid) for pid in text.split() if pid.isdigit() and _alive(int(pid))]

    def rmdir(self, path: Path) -> None:
        with self.lock:
            self._rmdir(path)

    def _rmdir(self, path: Path) -> None:
        if not path.is_dir():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        if any(child.is_dir() for child in path.iterdir()) or self.pids(path):
            raise OSError(errno.EBUSY, "Device or resource busy")
        for child in path.iterdir():
            child.unlink()
        path.rmdir()

    def written(self, path: Path) -> list[str]:
        return [text for where, text in self.writes if where == path]


def _escaped(path: Path) -> str:
    """A path as /proc/self/mounts writes it."""
    return str(path).replace("\\", "\\134").replace(" ", "\\040")


def v2_tree(root: Path, cpus: str = "0-3", namespaced: bool = False) -> tuple[str, FakeFs]:
    """A cgroup2 mount at `root`: (the /proc/self/mounts text, its file system)."""
    root.mkdir(parents=True, exist_ok=True)
    fs = FakeFs(V2_FILES, (root,), namespaced)
    fs.populate(root, cpus)
    if namespaced:   # a container's cgroup namespace: its root is a cgroup with processes
        (root / "cgroup.procs").write_text(f"{os.getpid()}\n", encoding="ascii")
    return f"cgroup2 {_escaped(root)} cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\n", fs


def v1_tree(root: Path, cpus: str = "0-3", together: bool = True, freezer: bool = True) -> tuple[str, FakeFs]:
    """v1 hierarchies under `root` as this project's 2-core machine has them (a cgroup2 beside them
    with no controller: hybrid), cpu and cpuacct in one tree (`together`) or two, and the freezer's."""
    names = ("cpu,cpuacct", "cpuset") if together else ("cpu", "cpuacct", "cpuset")
    names += ("freezer",) if freezer else ()
    lines = [f"tmpfs {_escaped(root)} tmpfs rw,relatime,mode=755 0 0"]
    folders = []
    for name in names:
        folder = root / name
        folder.mkdir(parents=True)
        folders.append(folder)
        lines.append(f"cgroup {_escaped(folder)} cgroup rw,nosuid,relatime,{name} 0 0")
    unified = root / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("\n", encoding="ascii")
    lines.append(f"cgroup2 {_escaped(unified)} cgroup2 rw,relatime 0 0")
    fs = FakeFs(V1_FILES, tuple(folders))
    for folder in folders:
        fs.populate(folder, cpus)
    return "\n".join(lines) + "\n", fs
