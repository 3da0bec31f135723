"""The real tools, each a subprocess (process.py): nvcc, the untrusted runner and timing worker
(sandboxed, they load student modules), compute-sanitizer around the runner (sandboxed), and the
trusted checker.

Student code only ever runs inside the sandbox (sandbox.py), never in the grader's process or in a
process the grader believes. The runner and the timing worker report on a channel of their own
(process.Channel), which the checker reads with the run's token; their stdout and stderr are the
student's program output.

The timing runs (the timing group's core, the timekeeper, paired host runs) are in timing_runs.py.

Tests replace Toolchain with a fake that has the same methods (grader_tests/helpers.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ..contract import REUSE_BUFFERS_FLAG
from ..judge.call_limit import CallLimit
from ..judge.checks import TestCheck, parse_device_check, parse_test_check
from ..judge.compile_view import Seen, compile_view, missing_files, outside_view
from ..judge.libraries import (CUB, PROBE, THRUST, Library, hidden_library_folders, parse_dependencies,
                               parse_include_tree, refused_headers, used_headers)
from ..judge.sanitizer_log import ERROR_EXITCODE, LogChannel, log_text
from ..manifest import Lab, Manifest
from ..sandbox.bubblewrap import Limits, Sandbox, View
from ..sandbox.cpu_share import CpuShare
from ..sandbox.ending import Ending
from ..sandbox.gpu_nodes import bus_id_key
from ..sandbox.process import Channel, pinned, run_process
from ..sandbox.process import ProcessResult
from ..sandbox.toolkit import toolkit_of
from .timing_runs import TimingRuns

TRUSTED_TIMEOUT_S = 600.0
CONNECTIONS_VARIABLE = "CUDA_DEVICE_MAX_CONNECTIONS"   # [tests] cuda_connections, for the test and sanitizer runs
DEPENDENCIES_BYTES = 8 << 20   # nvcc's include list of one lab file (CUB and Thrust together: about 200 KiB)


def _read_bounded(path: Path) -> str | None:
    """A file the sandbox wrote, never through a link and never more than DEPENDENCIES_BYTES; None
    when it is missing, a link, or too large."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(DEPENDENCIES_BYTES + 1)
    return None if len(data) > DEPENDENCIES_BYTES else data.decode("utf-8", errors="replace")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class CompileRun:
    process: ProcessResult          # the graded compile
    refused: tuple[str, ...] = ()   # library headers the lab file used that its lab refuses (<...> names, libraries.py)
    unlisted: bool = False          # it compiled, but its include list could not be read: the refusal is unchecked
    outside: tuple[str, ...] = ()   # files it asked for outside the compile's view, as the compiler named them
                                    # (printable, bounded: compile_view.py); none when refused
    cached: bool = False            # not run: the module of an identical lab file compiled before (compile_cache.py)


class Toolchain(TimingRuns):
    """Runs the real tools of one build tree; student code under `sandbox`."""

    def __init__(self, manifest: Manifest, sandbox: Sandbox | None = None, limits: Limits | None = None,
                 allow_cccl: bool = False, cpu_share: CpuShare | None = None, cuda_connections: int = 0):
        self.manifest = manifest
        self.cuda_connections = cuda_connections   # [tests] cuda_connections; 0: the driver's default
        self.cpu_share = cpu_share or CpuShare.off("not asked for")   # each student's runs in its cgroup
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
        with isolated.run_user() as user, isolated.seccomp_fds() as fds:
            result = run_process(isolated.command([str(self.manifest.checker), "device"], view, user, fds), 120,
                                 env=isolated.environment(os.environ), preexec=isolated.preexec(self.limits),
                                 pass_fds=fds)
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
        return f"{self.sandbox.describe()}, {self.cpu_share.describe()}"

    # ---- running

    def _trusted(self, argv: list[str], timeout: float = TRUSTED_TIMEOUT_S) -> ProcessResult:
        return run_process(argv, timeout)

    def _sandboxed(self, argv: list[str], view: View, timeout: float, stall_s: float | None = None,
                   channel: Channel | None = None, cpu: int | None = None, group=None,
                   clock: list[str] | None = None, clock_fds: tuple[int, ...] = (),
                   device_checks: bool = False) -> ProcessResult:
        """`argv` in the sandbox, in the CPU share of `group` (a student, or TIMING); with `clock` (the
        timekeeper's command up to its "--"; `clock_fds`: descriptors for it alone, which it keeps from
        the sandbox), the trusted timekeeper runs outside with the grader's environment and starts the
        sandbox itself. `device_checks`: a test or sanitizer run of GPU labs, which gets the context of
        [tests] cuda_connections (correctness_environment)."""
        env = {**self.sandbox.environment(os.environ), "LC_ALL": "C"}  # ASCII diagnostics, whatever the locale
        if device_checks:
            env.update(self.correctness_environment())
        # A uid of its own for this run, released when it ended, and its own copy of the seccomp filter.
        with self.sandbox.run_user() as user, self.sandbox.seccomp_fds() as fds:
            command = self.sandbox.command(argv, view, user, fds)
            if clock:  # the sandbox gets exactly its environment, the timekeeper the grader's (its GPU, unrenamed)
                command = [*clock, shutil.which("env") or "/usr/bin/env", "-i",
                           *[f"{name}={value}" for name, value in env.items()], *command]
                env = None
            preexec = self.cpu_share.preexec(group, pinned(self.sandbox.preexec(self.limits), cpu))  # its share first
            ending = Ending(kill=lambda: self.sandbox.kill_run(user), rescue=self.cpu_share.rescue)
            return run_process(command, timeout, env=env,
                               cwd=view.cwd, preexec=preexec, stall_s=stall_s,
                               output_limit=self.limits.file_bytes, channel=channel, pass_fds=(*fds, *clock_fds),
                               ending=ending)

    def correctness_environment(self) -> dict[str, str]:
        """What a test or sanitizer run of GPU labs adds to the sandbox's environment: a context with
        [tests] cuda_connections hardware queues, which the host's driver makes and ends in less than
        half the time (settings.py). Never a timing run's: its streams keep the driver's default."""
        return {CONNECTIONS_VARIABLE: str(self.cuda_connections)} if self.cuda_connections > 0 else {}

    def _check(self, command: str, plan: Path, run: ProcessResult, *args: str, report: str | None = None,
               token: str | None = None) -> ProcessResult:
        """The trusted checker on what arrived on a run's report channel (never on its stdout); a paired
        run's reference side gives its own `report` and `token`."""
        with tempfile.NamedTemporaryFile("w", suffix=".observed", encoding="utf-8") as observed:
            observed.write(run.report if report is None else report)
            observed.flush()
            return self._trusted([str(self.manifest.checker), command, f"--plan={plan}", f"--observed={observed.name}",
                                  f"--token={run.token if token is None else token}", *args])

    def _toolkit(self) -> Path:
        return toolkit_of(self.manifest.nvcc).root   # nvcc's own word: the nvcc on PATH may be a wrapper script

    def _nvcc(self) -> str:
        """The toolkit's own nvcc, at its real path: the compile's view holds the toolkit, not the links
        or a wrapper script that lead to it (/usr/local/cuda, /usr/local/bin/nvcc)."""
        own = self._toolkit() / "bin" / "nvcc"
        return str(own) if own.is_file() else self.manifest.nvcc

    def _compile_view(self, source: Path, scratch: Path, hidden: tuple[Path, ...]) -> View:
        return compile_view(self._toolkit(), source, self.manifest.include_dirs, scratch, hidden)

    def _outside(self, output: str, source: Path, view: View) -> tuple[str, ...]:
        """The files a compile in `view` said it could not read that lie outside that view."""
        names = missing_files(output)
        if not names or not self.sandbox.enabled:
            return ()
        bases = (source.resolve().parent, *map(Path, self.manifest.include_dirs),
                 *toolkit_of(self.manifest.nvcc).include_dirs, *((view.cwd,) if view.cwd else ()))
        return outside_view(names, Seen(view, self.sandbox), bases)

    def hidden_libraries(self) -> tuple[Path, ...]:
        """Every folder where a graded compile would find CUB or Thrust (libraries.py), found once per
        grading by asking the compiler in the sandbox; none when [compile] allow_cccl. libcu++ stays.
        The probe is also the compile view's check: raises RuntimeError when nvcc cannot run there."""
        with self._libraries_lock:
            if self._libraries is None:
                found = self._probe_libraries()
                self._libraries = () if self.allow_cccl else found
            return self._libraries

    def _probe_libraries(self) -> tuple[Path, ...]:
        known = tuple(folder / library.top for folder in toolkit_of(self.manifest.nvcc).include_dirs
                      for library in (CUB, THRUST))
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
                argv = [self._nvcc(), "-M", "-x", "cu", "-std=c++17",
                        *[f"-I{d}" for d in self.manifest.include_dirs], str(source)]
                result = self._sandboxed(argv, self._compile_view(source, scratch, hidden), TRUSTED_TIMEOUT_S)
                if result.returncode != 0:   # PROBE compiles wherever nvcc runs: the view lacks what nvcc needs
                    why = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
                    raise RuntimeError(f"nvcc -M does not run in the compile's view (compile_view.py): {why[:300]}")
                return result.stdout

            return hidden_library_folders(probe, known)

    def compile_identity(self) -> str:
        """What a compile's result depends on besides its lab file (compile_cache.py): nvcc's own
        version, the flags, the sandbox's word on the compile's view, the libraries hidden from it, and
        the project's headers byte for byte. Asked once per grading."""
        version = self._trusted([self._nvcc(), "--version"])
        if version.returncode != 0:
            raise RuntimeError(f"nvcc --version failed: {version.stderr.strip()[:200]}")
        digest = hashlib.sha256()
        # The sandbox by what a compile sees of it: bubblewrap's version and the seccomp filter, not the
        # GPU node (the workers of --gpus share the cache) nor the uids.
        sandbox = f"{self.sandbox.version} {self.sandbox.seccomp.describe()}" if self.sandbox.enabled else "none"
        for part in (self._nvcc(), version.stdout, *self.manifest.module_flags, sandbox,
                     *map(str, self.hidden_libraries())):
            digest.update(part.encode("utf-8") + b"\0")
        for folder in map(Path, self.manifest.include_dirs):
            for header in sorted(path for path in folder.rglob("*") if path.is_file()):
                digest.update(str(header).encode("utf-8") + b"\0" + header.read_bytes() + b"\0")
        return digest.hexdigest()

    # ---- the steps

    def compile(self, student: str, lab: Lab, source: Path, module: Path, timeout: float,
                refuse: tuple[Library, ...] = ()) -> CompileRun:
        """nvcc in the sandbox (the compile's view: compile_view.py); the module is then copied out by
        the grader, so nothing the sandbox can write is ever run later. A lab file whose include set
        holds a header of `refuse` is refused by that header's name: no module. A failed compile names
        the files it asked for outside its view (`outside`)."""
        scratch = module.parent / f".build-{lab.folder}"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        if module.exists():
            module.unlink()
        built = scratch / lab.module_file
        dependencies = scratch / "dependencies.d"
        argv = [self._nvcc(), *self.manifest.module_flags, *[f"-I{d}" for d in self.manifest.include_dirs],
                "-MD", "-MF", str(dependencies), str(source.resolve()), "-o", str(built)]
        # CUB and Thrust are not there either, wherever this machine keeps them (defense in depth: the
        # refusal by name below is the rule, and names the header even where hiding made the compile fail).
        view = self._compile_view(source, scratch, self.hidden_libraries())
        result = self._sandboxed(argv, view, timeout, group=student)
        run = CompileRun(result)
        compiled = result.returncode == 0 and not result.timed_out
        if refuse and not (result.timed_out or result.output_limit):
            listed = _read_bounded(dependencies) if compiled else None
            if compiled and listed is None:
                run.unlisted = True
            elif not compiled or refused_headers(parse_dependencies(listed), refuse):
                run.refused = self._used_libraries(source, scratch, refuse, timeout, listed, student)
        if not compiled and not run.refused:   # a hidden library's header is the refusal's to name
            run.outside = self._outside(result.stdout + "\n" + result.stderr, source, view)
        if compiled and not run.refused and not run.unlisted:
            try:
                descriptor = os.open(built, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                result.returncode = 1
            else:
                with os.fdopen(descriptor, "rb") as src, open(module, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(module, 0o644)
        shutil.rmtree(scratch, ignore_errors=True)
        return run

    def _used_libraries(self, source: Path, scratch: Path, refuse: tuple[Library, ...], timeout: float,
                        listed: str | None, student: str) -> tuple[str, ...]:
        """The refused headers the lab file used, named from gcc's include tree of every pass (-H), in
        a view that hides no library: a compile that failed because CUB was hidden still names it.
        Asked only when the compile failed or its include list held a refused header."""
        argv = [self._nvcc(), *self.manifest.module_flags, *[f"-I{d}" for d in self.manifest.include_dirs],
                "-M", "-Xcompiler=-H", str(source.resolve())]
        result = self._sandboxed(argv, self._compile_view(source, scratch, ()), timeout, group=student)
        used = used_headers(parse_include_tree(result.stderr), refuse)
        if not used:   # no tree (the listing failed): every refused header of the lists there are
            used = refused_headers(parse_dependencies(result.stdout + "\n" + (listed or "")), refuse)
        return tuple(used)

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

    def _observe_argv(self, lab: Lab, module: Path, plan: Path, call_limit: CallLimit) -> list[str]:
        return [str(self.manifest.observer), f"--lab={module.resolve()}", f"--expect={lab.folder}",
                f"--where={'host' if lab.host else 'device'}", f"--plan={plan.resolve()}", *call_limit.argv()]

    def _run_view(self, read_only: tuple[Path, ...], gpu: bool) -> View:
        """A run of student code (tests, sanitizer, timing): a minimal /etc, and no header folder, so that
        nothing it starts can compile a library (CUB, Thrust) at run time."""
        return View(read_only=(*read_only, self._toolkit()), gpu=gpu, etc="minimal",
                    hidden=(self._toolkit() / "include", Path("/usr/include"), Path("/usr/local/include")))

    def _runner_view(self, lab: Lab, module: Path, plan: Path, extra: tuple[Path, ...] = ()) -> View:
        return self._run_view((self.manifest.observer, module.resolve(), plan.resolve(), *extra), not lab.host)

    def run_tests(self, student: str, lab: Lab, module: Path, plan: Path, cache: Path, timeout: float,
                  call_limit: CallLimit | float) -> tuple[ProcessResult, TestCheck | None]:
        """The runner in the sandbox, then the trusted checker on what it printed. The grader's own stall
        limit is past the full call limit: the runner's watchdog ends a call, this ends a run that
        silenced it."""
        call_limit = CallLimit.of(call_limit)
        with Channel() as channel:
            run = self._sandboxed(self._observe_argv(lab, module, plan, call_limit) + [REUSE_BUFFERS_FLAG]
                                  + channel.argv(),
                                  self._runner_view(lab, module, plan), timeout, stall_s=call_limit.full_s + 10,
                                  channel=channel, group=student, device_checks=not lab.host)
        checked = self._check("tests", plan, run, f"--reference={self.manifest.reference_module(lab)}", f"--cache={cache}")
        try:
            return run, parse_test_check(checked.stdout)
        except ValueError:
            return run, None

    sanitize_together = True   # run_sanitizer_labs: one tool process over several labs (sanitize.py)

    test_together = True   # run_tests_labs: one runner over several labs (run_tests.py)

    def run_tests_labs(self, student: str, labs: list[tuple[Lab, Path, Path]], cache: Path, timeout: float,
                       call_limit: CallLimit | float) -> tuple[ProcessResult, dict[str, TestCheck | None]]:
        """run_tests over several GPU labs ((lab, module, plan) each) in one runner, one lab after another
        (one process, one CUDA context), then the checker on each lab's part of its report."""
        call_limit = CallLimit.of(call_limit)
        where, groups, read_only = self._several(labs)
        with Channel() as channel:
            argv = [str(self.manifest.observer), *groups, f"--where={where}", *call_limit.argv(),
                    REUSE_BUFFERS_FLAG, *channel.argv()]
            run = self._sandboxed(argv, self._run_view((self.manifest.observer, *read_only), where == "device"),
                                  timeout, stall_s=call_limit.full_s + 10, channel=channel, group=student,
                                  device_checks=where == "device")
        checks = {}
        for lab, _, plan in labs:
            checked = self._check("tests", plan, run, f"--reference={self.manifest.reference_module(lab)}",
                                  f"--cache={cache}", "--section")
            try:
                checks[lab.folder] = parse_test_check(checked.stdout)
            except ValueError:
                checks[lab.folder] = None
        return run, checks

    def run_sanitizer(self, student: str, lab: Lab, tool: str, module: Path, plan: Path, timeout: float,
                      call_timeout: float) -> ProcessResult:
        """The runner under compute-sanitizer in the sandbox; the tool's report comes back in the result's
        `log`, from a pipe of its own that the runner closes before it loads the module (sanitizer_log.py)."""
        return self.run_sanitizer_labs(student, [(lab, module, plan)], tool, timeout, call_timeout)

    def run_sanitizer_labs(self, student: str, labs: list[tuple[Lab, Path, Path]], tool: str, timeout: float,
                           call_timeout: float) -> ProcessResult:
        """run_sanitizer over several labs ((lab, module, small plan) each) in one runner, one lab after
        another: one start of the tool for all of them. Its log speaks of them all at once, so only a
        clean one is read as each lab's result (sanitize.py)."""
        where, groups, read_only = self._several(labs)
        # The real path: the one found on PATH may lead through links the run's view lacks (minimal_etc.py).
        sanitizer = Path(self.sanitizer_path() or "/usr/bin/compute-sanitizer").resolve()
        with LogChannel() as log:
            argv = [str(sanitizer), "--tool", tool, "--error-exitcode", str(ERROR_EXITCODE), *log.tool_argv(),
                    str(self.manifest.observer), *groups, f"--where={where}", f"--call-timeout={call_timeout:g}",
                    *log.runner_argv()]
            view = self._run_view((self.manifest.observer, *read_only, sanitizer.parent.parent), where == "device")
            run = self._sandboxed(argv, view, timeout, channel=log, group=student, device_checks=where == "device")
        run.log, run.report = log_text(run.report), ""
        return run

    @staticmethod
    def _several(labs: list[tuple[Lab, Path, Path]]) -> tuple[str, list[str], tuple[Path, ...]]:
        """A runner over several labs: where they run (all on the device or all on the host), the
        runner's arguments for them in order, and the files its view must show."""
        where = {"host" if lab.host else "device" for lab, _, _ in labs}
        if len(where) != 1:
            raise ValueError("one run is for host labs or for GPU labs, not both")
        groups = [arg for lab, module, plan in labs
                  for arg in (f"--lab={module.resolve()}", f"--expect={lab.folder}", f"--plan={plan.resolve()}")]
        return where.pop(), groups, tuple(path.resolve() for _, module, plan in labs for path in (module, plan))
