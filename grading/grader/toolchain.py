"""The real tools, each a subprocess: nvcc, the untrusted runner and timing worker (sandboxed, they
load student modules), compute-sanitizer around the runner (sandboxed), and the trusted checker.

Student code only ever runs inside the sandbox (sandbox.py), never in the grader's process or in a
process the grader believes. Each run has a wall-clock limit, and runs that report progress a
stall limit too (no new output for a call's time limit: stopped, a TIMEOUT); the whole process
group is killed at either. Output goes to temporary files, not pipes, and the sandbox's file-size
limit stops a flood; only the head and tail of each stream are kept in memory.

Tests replace Toolchain with a fake that has the same methods (grader_tests/helpers.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .checks import TestCheck, TimingCheck, parse_device_check, parse_test_check, parse_timing_check
from .gpu_nodes import bus_id_key
from .libraries import PROBE, hidden_library_folders
from .manifest import Lab, Manifest
from .sandbox import Limits, Sandbox, View
from .verdicts import ProcessResult

HEAD_BYTES = 2 << 20   # keep the first 2 MiB of a stream (the observations of a test run are far less)
TAIL_BYTES = 256 << 10  # and its last 256 KiB (summaries are at the end)
POLL_S = 0.2
TRUSTED_TIMEOUT_S = 600.0


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


def run_process(command: list[str], timeout: float | None, env: dict[str, str] | None = None,
                cwd: str | os.PathLike | None = None, preexec=None, stall_s: float | None = None,
                output_limit: int | None = None) -> ProcessResult:
    """Runs `command` in a new process group with exactly `env` (None: the grader's own); kills the
    group when `timeout` seconds pass, or `stall_s` pass with no new output."""
    if _STOPPING.is_set():
        raise Stopping("the grader is stopping")
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                       start_new_session=True, preexec_fn=preexec)
        except OSError as exc:
            return ProcessResult(127, "", f"cannot start {command[0]}: {exc}", False, 0.0, list(command), timeout)
        with _LIVE_LOCK:
            _LIVE.add(process.pid)
        timed_out = stalled = False
        size, changed = 0, start
        try:
            while process.poll() is None:
                now = time.monotonic()
                if timeout is not None and now - start > timeout:
                    timed_out = True
                    break
                grown = os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
                if grown != size:
                    size, changed = grown, now
                elif stall_s is not None and now - changed > stall_s:
                    stalled = True
                    break
                try:
                    process.wait(timeout=POLL_S)  # returns at once when the run ends
                except subprocess.TimeoutExpired:
                    pass
        except BaseException:  # Ctrl-C: leave nothing running behind
            _kill_group(process.pid)
            process.wait()
            raise
        finally:
            _kill_group(process.pid)  # the limit, or anything the run left in its group
            process.wait()
            with _LIVE_LOCK:
                _LIVE.discard(process.pid)
        flood = output_limit is not None and max(os.fstat(out.fileno()).st_size,
                                                 os.fstat(err.fileno()).st_size) >= output_limit
        return ProcessResult(process.returncode, _read_limited(out), _read_limited(err), timed_out,
                             time.monotonic() - start, list(command), timeout, stalled, flood)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class TimingRun:
    process: ProcessResult
    check: TimingCheck | None
    problem: str = ""   # why there is no check (the checker failed: a grader problem)


class Toolchain:
    """Runs the real tools of one build tree; student code under `sandbox`."""

    def __init__(self, manifest: Manifest, sandbox: Sandbox | None = None, limits: Limits | None = None,
                 allow_cccl: bool = False):
        self.manifest = manifest
        self.sandbox = sandbox or Sandbox(False, "no sandbox given")
        self.limits = limits or Limits()
        self.allow_cccl = allow_cccl
        self._gpu: bool | None = None
        self._sanitizer: str | None | bool = False
        self._libraries: tuple[Path, ...] | None = None
        self._libraries_lock = threading.Lock()

    # ---- what this machine has (the grader's knowledge, never a student process's claim)

    def gpu_available(self) -> bool:
        """A CUDA device answers a trusted program (which also creates /dev/nvidia-uvm for the sandbox).
        Its PCI bus id then limits the GPU runs' sandboxes to that GPU's device node."""
        if self._gpu is None:
            self._gpu = False
            if shutil.which("nvidia-smi") and run_process(["nvidia-smi", "-L"], timeout=30).returncode == 0:
                device = parse_device_check(self._trusted([str(self.manifest.checker), "device"]).stdout)
                self._gpu = device is not None and device.devices > 0
                if self._gpu and self.sandbox.enabled:
                    self.sandbox = self._gpu_sandbox(device.pci_bus_id)
        return self._gpu

    def _gpu_sandbox(self, bus_id: str) -> Sandbox:
        """The sandbox with GPU runs given the node of the GPU at `bus_id` alone, when the checker, run in
        such a sandbox, sees that one GPU there; else with every node, and why."""
        isolated = self.sandbox.with_gpu(bus_id, os.environ.get("CUDA_VISIBLE_DEVICES", ""))
        if not isolated.gpu.isolated:
            return isolated
        view = View(read_only=(self.manifest.checker,), gpu=True, etc="minimal")
        with isolated.run_user() as user:
            result = run_process(isolated.command([str(self.manifest.checker), "device"], view, user), 120,
                                 env=isolated.environment(os.environ), preexec=isolated.preexec(self.limits))
        seen = parse_device_check(result.stdout)
        if seen is not None and seen.devices == 1 and bus_id_key(seen.pci_bus_id) == bus_id_key(bus_id):
            return isolated
        why = (result.stderr.strip().splitlines() or [result.stdout.strip() or f"exit status {result.returncode}"])[-1]
        return self.sandbox.with_every_gpu_node(f"a sandbox with only /dev/nvidiaN of {bus_id} did not see it: "
                                                f"{why[:200]}")

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

    def sandbox_status(self) -> str:
        return self.sandbox.describe()

    # ---- running

    def _trusted(self, argv: list[str], timeout: float = TRUSTED_TIMEOUT_S) -> ProcessResult:
        return run_process(argv, timeout)

    def _sandboxed(self, argv: list[str], view: View, timeout: float, stall_s: float | None = None) -> ProcessResult:
        env = {**self.sandbox.environment(os.environ), "LC_ALL": "C"}  # ASCII diagnostics, whatever the locale
        with self.sandbox.run_user() as user:   # a uid of its own for this run, released when it ended
            return run_process(self.sandbox.command(argv, view, user), timeout, env=env,
                               cwd=view.cwd, preexec=self.sandbox.preexec(self.limits), stall_s=stall_s,
                               output_limit=self.limits.file_bytes)

    def _toolkit(self) -> Path:
        return Path(self.manifest.nvcc).resolve().parent.parent

    def _compile_view(self, source: Path, scratch: Path, hidden: tuple[Path, ...]) -> View:
        return View(read_only=(source.resolve(), *map(Path, self.manifest.include_dirs), self._toolkit()),
                    writable=(scratch,), cwd=scratch, hidden=hidden)

    def hidden_libraries(self) -> tuple[Path, ...]:
        """Every folder where a graded compile would find CUB, Thrust or libcu++ (libraries.py), found
        once per grading by asking the compiler in the sandbox; none when [compile] allow_cccl."""
        with self._libraries_lock:
            if self._libraries is None:
                self._libraries = () if self.allow_cccl else self._probe_libraries()
            return self._libraries

    def _probe_libraries(self) -> tuple[Path, ...]:
        known = (self._toolkit() / "include" / "cccl",)
        if not self.sandbox.enabled:   # nothing can be hidden from an unsandboxed compile anyway
            return known
        with tempfile.TemporaryDirectory(prefix="reduction-cccl-probe-") as folder:
            scratch = Path(folder) / "scratch"
            scratch.mkdir()
            source = Path(folder) / "probe.cu"
            source.write_text(PROBE, encoding="ascii")
            source.chmod(0o644)
            os.chmod(folder, 0o755)

            def probe(hidden: tuple[Path, ...]) -> str:
                argv = [self.manifest.nvcc, "-M", "-x", "cu", "-std=c++17",
                        *[f"-I{d}" for d in self.manifest.include_dirs], str(source)]
                result = self._sandboxed(argv, self._compile_view(source, scratch, hidden), TRUSTED_TIMEOUT_S)
                return result.stdout if result.returncode == 0 else ""

            return hidden_library_folders(probe, known)

    # ---- the steps

    def compile(self, student: str, lab: Lab, source: Path, module: Path, timeout: float) -> ProcessResult:
        """nvcc in the sandbox (it sees the harness headers, its source and a scratch folder); the
        module is then copied out by the grader, so nothing the sandbox can write is ever run later."""
        scratch = module.parent / f".build-{lab.folder}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        if module.exists():
            module.unlink()
        built = scratch / lab.module_file
        argv = [self.manifest.nvcc, *self.manifest.module_flags, *[f"-I{d}" for d in self.manifest.include_dirs],
                str(source.resolve()), "-o", str(built)]
        # The CUDA C++ Core Libraries (CUB, Thrust, libcu++) are not there, wherever this machine keeps
        # them: a lab is the student's own reduction, not a call of the library the course times it against.
        result = self._sandboxed(argv, self._compile_view(source, scratch, self.hidden_libraries()), timeout)
        if result.returncode == 0 and not result.timed_out:
            try:
                descriptor = os.open(built, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                result.returncode = 1
            else:
                with os.fdopen(descriptor, "rb") as src, open(module, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(module, 0o644)
        shutil.rmtree(scratch, ignore_errors=True)
        return result

    def make_plan(self, lab: Lab, seed: int, path: Path, large: bool = False, cases: list[str] | None = None) -> None:
        """The trusted checker writes the lab's test plan (a sanitizer run's: `cases` only)."""
        argv = [str(self.manifest.checker), "plan", f"--lab={lab.folder}", f"--where={'host' if lab.host else 'device'}",
                f"--seed={seed}", f"--reference={self.manifest.reference_module(lab)}"]
        if large:
            argv.append("--large")
        if cases:
            argv.append("--cases=" + ";".join(cases))
        result = self._trusted(argv)
        if result.returncode != 0:
            raise RuntimeError(f"the checker could not write the plan of {lab.folder}: {result.stderr.strip()}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.stdout, encoding="utf-8")
        os.chmod(path, 0o644)

    def expect(self, plan: Path, cache: Path) -> None:
        """Precomputes the plan's expected sums into the run's cache (once a run, not once a student)."""
        result = self._trusted([str(self.manifest.checker), "expect", f"--plan={plan}", f"--cache={cache}"])
        if result.returncode != 0:
            raise RuntimeError(f"the checker could not compute the expected sums: {result.stderr.strip()}")

    def _observe_argv(self, lab: Lab, module: Path, plan: Path, call_timeout: float) -> list[str]:
        return [str(self.manifest.observer), f"--lab={module.resolve()}", f"--expect={lab.folder}",
                f"--where={'host' if lab.host else 'device'}", f"--plan={plan.resolve()}",
                f"--call-timeout={call_timeout:g}"]

    def _run_view(self, read_only: tuple[Path, ...], gpu: bool) -> View:
        """A run of student code (tests, sanitizer, timing): a minimal /etc, and no header folder, so that
        nothing it starts can compile a library (CUB, Thrust) at run time."""
        return View(read_only=(*read_only, self._toolkit()), gpu=gpu, etc="minimal",
                    hidden=(self._toolkit() / "include", Path("/usr/include"), Path("/usr/local/include")))

    def _runner_view(self, lab: Lab, module: Path, plan: Path, extra: tuple[Path, ...] = ()) -> View:
        return self._run_view((self.manifest.observer, module.resolve(), plan.resolve(), *extra), not lab.host)

    def run_tests(self, student: str, lab: Lab, module: Path, plan: Path, cache: Path, timeout: float,
                  call_timeout: float) -> tuple[ProcessResult, TestCheck | None]:
        """The runner in the sandbox, then the trusted checker on what it printed."""
        run = self._sandboxed(self._observe_argv(lab, module, plan, call_timeout), self._runner_view(lab, module, plan),
                              timeout, stall_s=call_timeout + 10)
        with tempfile.NamedTemporaryFile("w", suffix=".observed", encoding="utf-8") as observed:
            observed.write(run.stdout)
            observed.flush()
            checked = self._trusted([str(self.manifest.checker), "tests", f"--plan={plan}", f"--observed={observed.name}",
                                     f"--reference={self.manifest.reference_module(lab)}", f"--cache={cache}"])
        try:
            return run, parse_test_check(checked.stdout)
        except ValueError:
            return run, None

    def run_sanitizer(self, student: str, lab: Lab, tool: str, module: Path, plan: Path, timeout: float,
                      call_timeout: float) -> ProcessResult:
        argv = [self.sanitizer_path() or "compute-sanitizer", "--tool", tool, "--error-exitcode", "99",
                *self._observe_argv(lab, module, plan, call_timeout)]
        sanitizer_home = Path(self.sanitizer_path() or self._toolkit()).resolve().parent.parent
        return self._sandboxed(argv, self._runner_view(lab, module, plan, (sanitizer_home,)), timeout)

    def time(self, plan_text: str, work: Path, sandboxed: bool, readable: tuple[Path, ...], gpu: bool,
             timeout: float, call_timeout: float, cache: Path | None = None) -> TimingRun:
        """One timing run of a plan (written by the checker's `timing-plan`), then its check. The
        student's modules run sandboxed; references and baselines run trusted."""
        work.mkdir(parents=True, exist_ok=True)
        plan = Path(tempfile.mkstemp(dir=work, prefix="timing-", suffix=".plan")[1])
        plan.write_text(plan_text, encoding="utf-8")
        os.chmod(plan, 0o644)
        if sandboxed:  # the worker built without CUB: no library reduction in reach of the student's code
            argv = [str(self.manifest.student_worker), f"--plan={plan}"]
            view = self._run_view((self.manifest.student_worker, plan, *readable), gpu)
            run = self._sandboxed(argv, view, timeout, stall_s=call_timeout + 30)
        else:
            argv = [str(self.manifest.time_worker), f"--plan={plan}"]
            run = run_process(argv, timeout, stall_s=call_timeout + 30)
        with tempfile.NamedTemporaryFile("w", suffix=".observed", encoding="utf-8") as observed:
            observed.write(run.stdout)
            observed.flush()
            checked = self._trusted([str(self.manifest.checker), "timing", f"--plan={plan}", f"--observed={observed.name}",
                                     f"--reference-dir={self.manifest.reference_dir}",
                                     *([f"--cache={cache}"] if cache else [])])
        plan.unlink()
        try:
            return TimingRun(run, parse_timing_check(checked.stdout))
        except ValueError as exc:
            return TimingRun(run, None, f"the timing check failed: {exc}; {checked.stderr.strip()[-300:]}")

    def timing_plan(self, seed: int, items: list[str], samples: int, warmup: int, call_timeout: float) -> str:
        """The checker writes a timing plan; `items` are "id,lab,where,type,n[,module]"."""
        argv = [str(self.manifest.checker), "timing-plan", f"--seed={seed}", f"--samples={samples}",
                f"--warmup={warmup}", f"--call-timeout={call_timeout:g}", "--items=" + ";".join(items)]
        result = self._trusted(argv)
        if result.returncode != 0:
            raise RuntimeError(f"the checker could not write a timing plan: {result.stderr.strip()}")
        return result.stdout
