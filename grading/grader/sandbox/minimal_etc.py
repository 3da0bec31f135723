"""The /etc a run of student code sees: what the dynamic loader needs, and a made-up user database.

A run's stdout and stderr go into the student's own report, so a run could print any file it can
read there: /etc/passwd, /etc/hostname, the machine's configuration. Runs of student code (tests,
sanitizer, timing) see only the loader's cache and configuration (ld.so.cache, ld.so.conf and the
files its `include` lines name, each link resolved to its file) and a passwd, group and
nsswitch.conf written by the grader, with root and the sandbox users alone (a tool may look its user
up). There is no ld.so.preload.

Compiles (compile_view.py) see the loader's files alone: nvcc, the host compiler, the assembler and
the linker read ld.so.cache and nothing else of /etc (measured with strace, nvcc 13 and gcc 12, LC_ALL=C:
/etc/localtime and /etc/malloc.conf are looked for and not needed), and no tool of a compile looks a
user up, so an `.incbin "/etc/passwd"` or an `#include` of it finds nothing.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

LOADER_FILES = ("ld.so.cache", "ld.so.conf")
# /etc/alternatives holds symbolic links only (Debian's update-alternatives): links of the system
# folders lead through it (/usr/local/cuda -> /etc/alternatives/cuda where the toolkit came from
# packages, /usr/bin/cc), and without it they dangle: compute-sanitizer run by that path could
# not start (exit 127, seen on an H100 machine, 2026-11-25).
MAX_INCLUDE_DEPTH = 4   # ld.so.conf may include files that include files
NO_SHELL = "/usr/sbin/nologin"
USER_DATABASE = ("passwd", "group", "nsswitch.conf")   # made up by the grader (write_user_database)
ETC_KINDS = ("full", "minimal", "loader")   # View.etc: the machine's; a run's; a compile's (the loader's alone)


@dataclass(frozen=True)
class MinimalEtc:
    """Files to bind read-only: (source on the machine, path in the sandbox, under /etc)."""
    files: tuple[tuple[Path, Path], ...]

    @classmethod
    def build(cls, generated: Path | None, uids: Iterable[int], etc: Path = Path("/etc")) -> MinimalEtc:
        """The loader's files of `etc`, and (when `generated` is a folder to write them into) the
        made-up passwd, group and nsswitch.conf naming `uids`."""
        files = list(loader_files(etc))
        if (etc / "alternatives").is_dir():   # links only: /usr/local/cuda and /usr/bin/cc lead through it
            files.append((etc / "alternatives", Path("/etc/alternatives")))
        if generated is not None:
            files += [(path, Path("/etc") / path.name) for path in write_user_database(generated, uids)]
        return cls(tuple(files))

    def seen(self, kind: str) -> tuple[tuple[Path, Path], ...]:
        """What a View(etc=kind) gets: "minimal" every file; "loader" all but the user database."""
        if kind == "loader":
            return tuple((source, inside) for source, inside in self.files
                         if not (inside.parent == Path("/etc") and inside.name in USER_DATABASE))
        return self.files


def loader_files(etc: Path = Path("/etc")) -> list[tuple[Path, Path]]:
    """(real file, path under /etc) of ld.so.cache, ld.so.conf and every file its includes name."""
    found: dict[Path, Path] = {}

    def add(path: Path, depth: int) -> None:
        path = Path(os.path.normpath(path))
        if not path.is_relative_to(etc):
            return
        inside = Path("/etc") / path.relative_to(etc)
        if inside in found or not path.is_file():
            return
        found[inside] = path.resolve()
        if path.name == "ld.so.cache" or depth >= MAX_INCLUDE_DEPTH:
            return
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) < 2 or words[0] != "include":
                continue
            for pattern in map(Path, words[1:]):
                if pattern.is_absolute():   # /etc/... (read under `etc`); anything else is not bound
                    if not pattern.is_relative_to("/etc"):
                        continue
                    pattern = etc / pattern.relative_to("/etc")
                else:
                    pattern = path.parent / pattern
                for name in sorted(glob.glob(str(pattern))):
                    add(Path(name), depth + 1)

    for name in LOADER_FILES:
        add(etc / name, 0)
    return [(source, inside) for inside, source in found.items()]


def write_user_database(folder: Path, uids: Iterable[int]) -> list[Path]:
    """passwd, group and nsswitch.conf in `folder` (mode 0644): root and each of `uids`, no other name.
    No line is one of a real passwd's (a report that prints them quotes no line of the machine's)."""
    uids = sorted(set(uids))
    users = ["root:x:0:0:sandbox root:/:" + NO_SHELL] + [f"sandbox:x:{uid}:{uid}:sandboxed run:/tmp:{NO_SHELL}"
                                                        for uid in uids]
    groups = ["root:x:0:"] + [f"sandbox:x:{uid}:" for uid in uids]
    texts = {"passwd": users, "group": groups, "nsswitch.conf": ["passwd: files", "group: files", "shadow: files",
                                                                  "hosts: files"]}
    written = []
    for name, lines in texts.items():
        path = folder / name
        path.write_text("\n".join(lines) + "\n", encoding="ascii")
        path.chmod(0o644)
        written.append(path)
    return written
