"""The real tools: nvcc, the test runner, compute-sanitizer and the benchmark, each a subprocess.

Student code only ever runs inside these subprocesses, never inside the grader. Each runs in its
own process group with a wall-clock limit; on timeout the whole group is killed. Output goes to
temporary files rather than pipes, so a lab that prints without end cannot fill the grader's
memory: only the head and tail of each stream are kept.

Tests replace Toolchain with a fake that has the same methods (see grader_tests/fakes.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .manifest import Lab, Manifest
from .verdicts import ProcessResult

HEAD_BYTES = 2 << 20   # keep the first 2 MiB of a stream (the first failure block is near the top)
TAIL_BYTES = 256 << 10  # and its last 256 KiB (markers and summaries are at the end)


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


def kill_all() -> None:
    """Kills every process group the grader started that is still running, and lets no new one
    start (on SIGTERM or Ctrl-C)."""
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


def run_process(command: list[str], timeout: float | None, env: dict[str, str] | None = None,
                cwd: str | os.PathLike | None = None) -> ProcessResult:
    """Runs `command` in a new process group; kills the group when `timeout` seconds pass."""
    if _STOPPING.is_set():
        raise Stopping("the grader is stopping")
    start = time.monotonic()
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=full_env,
                                       cwd=cwd, start_new_session=True)
        except OSError as exc:
            return ProcessResult(127, "", f"cannot start {command[0]}: {exc}", False, 0.0, list(command), timeout)
        with _LIVE_LOCK:
            _LIVE.add(process.pid)
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process.pid)
            process.wait()
        except BaseException:  # Ctrl-C: leave nothing running behind
            _kill_group(process.pid)
            process.wait()
            raise
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(process.pid)
        _kill_group(process.pid)  # anything the lab left running in its group
        return ProcessResult(process.returncode, _read_limited(out), _read_limited(err), timed_out,
                             time.monotonic() - start, list(command), timeout)


class Toolchain:
    """Runs the real tools of one build tree."""

    def __init__(self, manifest: Manifest, env: dict[str, str] | None = None):
        self.manifest = manifest
        self.env = env or {}
        self._gpu: bool | None = None
        self._sanitizer: str | None | bool = False

    # ---- what this machine has

    def gpu_available(self) -> bool:
        if self._gpu is None:
            smi = shutil.which("nvidia-smi")
            self._gpu = False
            if smi:
                result = run_process([smi, "-L"], timeout=30)
                self._gpu = result.returncode == 0 and "GPU" in result.stdout
        return self._gpu

    def sanitizer_path(self) -> str | None:
        if self._sanitizer is False:
            found = shutil.which("compute-sanitizer")
            if not found and self.manifest.nvcc:  # the toolkit of this build, even when not on PATH
                candidate = Path(self.manifest.nvcc).parent / "compute-sanitizer"
                found = str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
            self._sanitizer = found
        return self._sanitizer or None

    def sanitizer_available(self) -> bool:
        return self.sanitizer_path() is not None

    # ---- the steps

    def compile_command(self, lab: Lab, source: Path, module: Path) -> list[str]:
        command = [self.manifest.nvcc, *self.manifest.module_flags]
        command += [f"-I{directory}" for directory in self.manifest.include_dirs]
        return command + [str(source), "-o", str(module)]

    def compile(self, student: str, lab: Lab, source: Path, module: Path, timeout: float) -> ProcessResult:
        module.parent.mkdir(parents=True, exist_ok=True)
        if module.exists():
            module.unlink()
        return run_process(self.compile_command(lab, source.resolve(), module.resolve()), timeout,
                           cwd=source.resolve().parent)

    def run_tests(self, student: str, lab: Lab, module: Path, gtest_filter: str, timeout: float,
                  call_timeout: float) -> ProcessResult:
        command = [str(self.manifest.test_runner), f"--lab={module.resolve()}", f"--gtest_filter={gtest_filter}"]
        return run_process(command, timeout, env={**self.env, "REDUCTION_CALL_TIMEOUT_S": str(call_timeout)})

    def run_sanitizer(self, student: str, lab: Lab, tool: str, module: Path, cases: list[str], timeout: float,
                      call_timeout: float) -> ProcessResult:
        command = [self.sanitizer_path() or "compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
                   str(self.manifest.test_runner), f"--lab={module.resolve()}", "--gtest_filter=" + ":".join(cases)]
        return run_process(command, timeout, env={**self.env, "REDUCTION_CALL_TIMEOUT_S": str(call_timeout)})

    def benchmark(self, student: str, module_dir: Path, labs: list[Lab], sizes: list[str], types: list[str],
                  budget_s: float, csv_path: Path, json_path: Path, timeout: float) -> ProcessResult:
        command = [str(self.manifest.bench), "--labs", ",".join(f"{lab.number:02d}" for lab in labs),
                   "--student-dir", str(module_dir.resolve()), "--reference-dir", str(self.manifest.reference_dir),
                   "--student-name", student, "--sizes", ",".join(sizes), "--types", ",".join(types),
                   "--budget", str(budget_s), "--csv", str(csv_path), "--json", str(json_path)]
        return run_process(command, timeout, env=self.env)
