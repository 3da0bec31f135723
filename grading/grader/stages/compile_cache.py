"""Compiled modules by content: a lab file compiled once is not compiled again, for this student or
another (the skeleton and the reference's region get handed in, by many students).

The key is the sha256 of everything a compile's result depends on: the spliced lab file's bytes,
the lab, the headers it may not use (the refusal), and the toolchain's identity (its nvcc's version
and flags, the hidden libraries, the project's own headers: Toolchain.compile_identity). A compile
sees nothing else of the student: its view holds the toolkit, the project's headers and the one
spliced file (compile_view.py), so two identical files compile to the same module whoever hands
them in.

Only a clean compile is kept: it succeeded, refused nothing, and printed nothing. The compiler's
words name the file compiled, in that student's folder, so they are never handed to another; a
compile that printed anything is compiled again, and the student reads its own words.

The cache is the grader's (OUT/work/.compile-cache): no sandbox sees it. Each entry keeps its
module's digest, checked before the module is used; an entry that fails the check is dropped.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from .toolchain import sha256_of

CACHE_FOLDER = ".compile-cache"


class CompileCache:
    def __init__(self, folder: Path, identity: str) -> None:
        self.folder = folder
        self.identity = identity
        self.hits = 0
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    @contextlib.contextmanager
    def building(self, key: str):
        """One compile of `key` at a time in this grader, and in every grader of this cache (the workers
        of --gpus share OUT): the students in flight that hand in the same file wait for the first
        one's module instead of compiling it beside it. Across processes the lock is a file's (flock):
        the kernel frees it when its holder ends, however it ends; its wait is bounded by that
        holder's compile limit ([compile] timeout_s)."""
        with self._lock:
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            locks = self.folder / "locks"
            locks.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(locks / f"{key}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                yield
            finally:
                os.close(descriptor)   # and with it the flock

    def key(self, folder: str, source: Path, refuse: tuple[str, ...]) -> str:
        digest = hashlib.sha256()
        for part in (self.identity, folder, "\n".join(sorted(refuse))):
            digest.update(part.encode("utf-8") + b"\0")
        digest.update(source.read_bytes())
        return digest.hexdigest()

    def source(self, key: str, spliced: Path) -> Path:
        """The file to compile: a copy of `spliced` under a folder named by `key`, so that what the module
        keeps of its source's path (line info, __FILE__) and the compiler's words name no student."""
        copy = self.folder / "src" / key / spliced.name
        if not copy.is_file() or copy.read_bytes() != spliced.read_bytes():
            _write_atomically(copy, spliced.read_bytes(), 0o644)   # the sandbox reads it as "others"
            for folder in (copy.parent, copy.parent.parent, self.folder):
                os.chmod(folder, 0o755)
        return copy

    def _paths(self, key: str) -> tuple[Path, Path]:
        return self.folder / f"{key}.module", self.folder / f"{key}.sha256"

    def fetch(self, key: str, module: Path) -> bool:
        """The module compiled from `key` copied to `module` (True), or nothing there (False)."""
        cached, digest_file = self._paths(key)
        try:
            digest = digest_file.read_text(encoding="ascii").strip()
        except OSError:
            return False
        if not cached.is_file() or sha256_of(cached) != digest:
            for path in (cached, digest_file):
                path.unlink(missing_ok=True)
            return False
        _write_atomically(module, cached.read_bytes(), 0o644)
        if sha256_of(module) != digest:   # the copy is what was kept, or nothing is used
            module.unlink(missing_ok=True)
            return False
        self.hits += 1
        return True

    def keep(self, key: str, module: Path) -> None:
        """`module`, compiled cleanly from `key`'s file, kept for the next identical one."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data = module.read_bytes()
        cached, digest_file = self._paths(key)
        _write_atomically(cached, data, 0o600)
        _write_atomically(digest_file, hashlib.sha256(data).hexdigest().encode("ascii") + b"\n", 0o600)


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    """Another student's compile of the same file may keep it at the same time: a rename wins whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
