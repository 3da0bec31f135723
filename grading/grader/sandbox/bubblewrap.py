"""The sandbox around every compile and run of student code: bubblewrap, then setpriv.

Student code is hostile: it wants points. Each run sees the system folders read-only, its own empty
/tmp, /run and /dev/shm, and only the paths its View names; the grader's folders (the repository,
the build tree, the outputs, the other submissions) are not there at all. It runs as a uid of its own
(run_users.py) with no capabilities, in its own PID, network, IPC and UTS namespaces: it cannot reach
the network or another run, and everything it starts dies with it. Resource limits are rlimits set
before exec; the process limit counts the run's own uid, so it binds that run alone. The CUDA
libraries a lab does not need are masked (denied_libraries.py); runs of student code see a minimal
/etc (minimal_etc.py) and only their own GPU (gpu_nodes.py); compiles see fewer system folders and
the loader's files of /etc alone (compile_view.py).

bubblewrap does the mounts and namespaces (as root, so no user namespace is needed); setpriv drops
to the unprivileged user last, because mounting needs root. Without root or bubblewrap the grader
still works, unsandboxed (degraded mode), and every report says so through describe().

Every run is under a seccomp filter (seccomp_filter.py), built once per grading; bubblewrap reads it
from a descriptor of the run's own (--seccomp FD). Callers run:
    with sandbox.run_user() as user, sandbox.seccomp_fds() as fds:
        subprocess.Popen(sandbox.command(argv, view, user, fds), env=sandbox.environment(os.environ),
                         preexec_fn=sandbox.preexec(limits), cwd=view.cwd, pass_fds=(*fds, ...), ...)
The env must be exactly environment()'s result, not merged into os.environ. Inherited descriptors
(pass_fds) reach the sandboxed program: bubblewrap and setpriv close none (bubblewrap closes the
filter's once it has read it).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import os
import resource
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..outputs.records import UNSANDBOXED
from .denied_libraries import denied_library_files
from .gpu_nodes import GpuView, every_node, own_node
from .keyrings import join_new_session_keyring
from .minimal_etc import ETC_KINDS, MinimalEtc
from .run_users import RUN_UIDS, SHARED_UID, RunUser, UidPool, describe_users, kill_processes_of
from .seccomp_filter import SeccompFilter, build as build_seccomp

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/sys")  # /sys: the CUDA driver
# Hidden in every run: the cgroup tree says which student's processes are frozen and when (the paired
# host timing freezes the student's worker during each reference call, cpu_share.py), which a run
# beside a timing could use to load the machine in step with one side's calls. Nothing a run needs.
HIDDEN_SYSTEM = (Path("/sys/fs/cgroup"),)
ENV_PASSTHROUGH = ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH",
                   "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LANG", "LC_ALL")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
SHM_BYTES = 256 << 20
SELF_TEST_TIMEOUT_S = 10


@dataclass(frozen=True)
class Limits:
    file_bytes: int = 64 << 20      # RLIMIT_FSIZE: no file (stdout/stderr redirected to files included) grows past this
    processes: int = 512            # RLIMIT_NPROC: processes and threads of the run's uid (its own: one run's)
    memory_bytes: int = 32 << 30    # RLIMIT_DATA (not RLIMIT_AS: CUDA reserves huge virtual ranges and fails under it)
    open_files: int = 4096          # RLIMIT_NOFILE
    core_bytes: int = 0             # RLIMIT_CORE


@dataclass(frozen=True)
class View:
    """What one sandboxed run may see besides the system folders."""
    read_only: tuple[Path, ...] = ()   # files or folders, visible read-only at the same path (modes unchanged:
                                       # the run's uid reads them as "others")
    writable: tuple[Path, ...] = ()    # scratch folders, read-write at the same path (the caller creates them)
    gpu: bool = False                  # bind the NVIDIA device nodes (the sandbox's GPU's only, once identified)
    cwd: Path | None = None            # inside the sandbox; /tmp when None
    tmp_bytes: int = 1 << 30           # size of the run's own /tmp (a tmpfs: memory no rlimit counts)
    hidden: tuple[Path, ...] = ()      # masked in this run too, beside the sandbox's own hidden paths
    etc: str = "full"                  # "full": the machine's /etc; "minimal": the loader's files and a made-up
                                       # passwd and group (minimal_etc.py), for runs of student code; "loader":
                                       # the loader's files alone, for compiles (compile_view.py)
    system: tuple[str, ...] = SYSTEM_FOLDERS   # the system folders it sees (a link into /usr stays a link)


def _real(path: str | os.PathLike) -> Path:
    return Path(path).resolve()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class Sandbox:
    enabled: bool                      # False: degraded mode, commands run as they are
    reason: str = ""                   # when not enabled: why
    hidden: tuple[Path, ...] = ()      # masked wherever they would otherwise be visible
    bwrap: str = "bwrap"
    setpriv: str = "setpriv"
    version: str = ""                  # "bubblewrap 0.8.0"
    drop_caps: bool = False            # this setpriv knows --inh-caps and --bounding-set
    users: UidPool | None = None       # a uid per run; None: every run is SHARED_UID
    users_note: str = ""               # why there is no uid per run
    denied: tuple[Path, ...] = ()      # library files masked in every run (denied_libraries.py)
    etc: MinimalEtc = MinimalEtc(())   # what a View(etc="minimal") gets of /etc
    gpu: GpuView | None = None         # what a View(gpu=True) gets; None: every node (no GPU identified yet)
    generated: Path | None = None      # the grader's own folder for files it makes up (root's, mode 0700)
    seccomp: SeccompFilter = SeccompFilter()  # the filter of every run (seccomp_filter.py); off: why, in describe()

    @classmethod
    def detect(cls, hidden: Iterable[Path] = (), library_folders: Iterable[Path] = ()) -> Sandbox:
        """The sandbox of this machine: enabled only as root, with bwrap and setpriv that pass a self-test.
        `library_folders`: where else the runs' libraries live (the CUDA toolkit), beside the system folders."""
        hidden = tuple(_real(path) for path in (*hidden, *HIDDEN_SYSTEM))
        if os.geteuid() != 0:
            return cls(False, "not root (setpriv needs root to drop to the sandbox's uids)", hidden)
        bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
        if not bwrap:
            return cls(False, "bwrap not found (install the bubblewrap package)", hidden)
        if not setpriv:
            return cls(False, "setpriv not found (install util-linux)", hidden)
        version, drop_caps = _tools(bwrap, setpriv)
        generated = Path(tempfile.mkdtemp(prefix="reduction-sandbox-"))
        atexit.register(shutil.rmtree, generated, True)
        try:
            users, note = UidPool(), ""
        except OSError as exc:
            users, note = None, f"no uid range: {exc}"
        denied = denied_library_files(tuple(SYSTEM_FOLDERS) + tuple(map(str, library_folders)))
        etc = MinimalEtc.build(generated, [*RUN_UIDS, SHARED_UID])
        sandbox = cls(True, "", hidden, bwrap, setpriv, version, drop_caps, users, note, denied, etc, None, generated)
        if users is not None and (error := sandbox.self_test()):
            sandbox = dataclasses.replace(sandbox, users=None, users_note=f"setpriv to uid {users.describe()} failed: "
                                                                          f"{error}")
        if sandbox.users is None and (error := sandbox.self_test()):
            return cls(False, f"bwrap failed its self-test: {error}", hidden)
        return sandbox.with_seccomp(build_seccomp())

    def with_seccomp(self, seccomp: SeccompFilter) -> Sandbox:
        """This sandbox with `seccomp` around every run, when `id -u` still answers under it; else without
        a filter, and why (the sandbox itself still counts)."""
        if seccomp.on and (error := dataclasses.replace(self, seccomp=seccomp).self_test()):
            seccomp = SeccompFilter(why_off=f"bwrap --seccomp failed its self-test: {error}")
        return dataclasses.replace(self, seccomp=seccomp)

    def self_test(self) -> str:
        """What went wrong when `id -u` in a full sandbox (minimal /etc) does not answer the run's uid; "" when it does."""
        try:
            with self.run_user() as user, self.seccomp_fds() as fds:
                result = subprocess.run(self.command([shutil.which("id") or "/usr/bin/id", "-u"], View(etc="minimal"),
                                                     user, fds),
                                        env=self.environment(os.environ), capture_output=True, text=True,
                                        timeout=SELF_TEST_TIMEOUT_S, pass_fds=fds)
        except subprocess.TimeoutExpired:
            return f"no answer within {SELF_TEST_TIMEOUT_S} s"
        except (OSError, RuntimeError) as exc:
            return str(exc)
        if result.returncode != 0 or result.stdout.strip() != str(user.uid):
            detail = (result.stderr.strip().splitlines() or [f"printed {result.stdout.strip()!r}"])[-1]
            return f"exit status {result.returncode}: {detail}"
        return ""

    def describe(self) -> str:
        if not self.enabled:
            return f"{UNSANDBOXED}: {self.reason}"
        users = describe_users(self.users.range if self.users is not None else None, self.users_note)
        parts = [self.version, users, "pid/net/ipc/uts namespaces", self.seccomp.describe(),
                 f"{len(self.denied)} CUDA library files masked"]
        return ", ".join(parts + ([self.gpu.note] if self.gpu is not None else []))

    @contextlib.contextmanager
    def run_user(self) -> Iterator[RunUser | None]:
        """Who the next run is, for the `with` block: a uid of the range no other run holds (None unsandboxed)."""
        if not self.enabled:
            yield None
        elif self.users is None:
            yield RunUser(SHARED_UID, SHARED_UID)
        else:
            with self.users.lease() as user:
                yield user

    def kill_run(self, user: RunUser | None) -> None:
        """SIGKILL to every process of `user`, a run's own uid, as the run ends (ending.py); nothing
        where runs share a uid or run unsandboxed (the uid is not the run's alone)."""
        if self.enabled and user is not None and self.users is not None and user.uid != SHARED_UID:
            kill_processes_of(user.uid)

    @contextlib.contextmanager
    def seccomp_fds(self) -> Iterator[tuple[int, ...]]:
        """The descriptors of the next run's filter, for command() and the run's pass_fds: (), or one
        descriptor of its own (bwrap reads it to the end), closed after the `with` block."""
        with (self.seccomp if self.enabled else SeccompFilter()).descriptors() as fds:
            yield fds

    def with_gpu(self, bus_id: str, visible_devices: str = "") -> Sandbox:
        """This sandbox with GPU runs limited to the GPU at `bus_id` (or every node, and why, when that GPU
        cannot be identified). `visible_devices`: the grader's CUDA_VISIBLE_DEVICES."""
        return dataclasses.replace(self, gpu=own_node(bus_id, self.generated, visible_devices=visible_devices))

    def with_every_gpu_node(self, reason: str) -> Sandbox:
        return dataclasses.replace(self, gpu=every_node(reason))

    def prepare_scratch(self, path: Path, user: RunUser | None) -> None:
        """Gives a writable folder to the run's user (owner its uid, mode 0700). Only the folder itself:
        what the caller put in it stays the caller's (readable, replaceable, not writable in place), and
        a recursive chown could follow a hard link a student left there to a file outside."""
        if not self.enabled:
            return
        if user is None:
            raise ValueError("a sandboxed run needs its user (Sandbox.run_user())")
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            raise ValueError(f"scratch folder {path} is not a folder")
        os.chown(path, user.uid, user.gid, follow_symlinks=False)
        os.chmod(path, 0o700)

    def command(self, argv: list[str], view: View, user: RunUser | None,
                seccomp_fds: tuple[int, ...] = ()) -> list[str]:
        """The full argv to exec for `argv` under `view` as `user` (from run_user()) and the filter on
        `seccomp_fds` (from seccomp_fds(); the run must inherit them); argv unchanged when not enabled.
        Chowns the view's writable folders to that user."""
        if not self.enabled:
            return list(argv)
        if user is None:
            raise ValueError("a sandboxed run needs its user (Sandbox.run_user())")
        if len(seccomp_fds) != (1 if self.seccomp.on else 0):   # a run without its filter never starts
            raise ValueError("a sandboxed run needs its filter's descriptor (Sandbox.seccomp_fds())" if self.seccomp.on
                             else "this sandbox has no seccomp filter to hand over")
        if view.etc not in ETC_KINDS:
            raise ValueError(f"View.etc is one of {ETC_KINDS}, not {view.etc!r}")
        for folder in view.writable:
            self.prepare_scratch(folder, user)
        args = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--die-with-parent", "--new-session", *(arg for fd in seccomp_fds for arg in ("--seccomp", str(fd)))]
        binds: list[tuple[Path, Path]] = []   # (real folder, where the sandbox sees it)
        for folder in map(Path, view.system):
            if not folder.exists() or (folder == Path("/etc") and view.etc != "full"):
                continue
            target = folder.resolve()
            # A folder inside another (/usr/bin): its parents 0755, not bwrap's 0700 (see _view_mounts).
            args += [word for parent in reversed(folder.parents[:-1]) for word in ("--dir", str(parent))]
            if folder.is_symlink() and _within(target, Path("/usr")):  # merged /usr: /bin -> usr/bin
                args += ["--symlink", os.readlink(folder), str(folder)]
            else:
                args += ["--ro-bind", str(target), str(folder)]
                binds.append((target, folder))
        if view.etc != "full":
            files = self.etc.seen(view.etc)
            args += ["--dir", "/etc"]
            for folder in sorted({parent for _, inside in files for parent in inside.parents
                                  if Path("/etc") in parent.parents}):
                args += ["--dir", str(folder)]
            for source, inside in files:
                args += ["--ro-bind", str(source), str(inside)]
        # The run's own /dev (null, zero, tty, ...), /proc (its PID namespace only) and empty /tmp, /run.
        args += ["--dev", "/dev", "--proc", "/proc",
                 "--perms", "1777", "--size", str(view.tmp_bytes), "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm", "--tmpfs", "/run"]
        if os.path.exists("/run/nvidia-persistenced"):
            args += ["--ro-bind", "/run/nvidia-persistenced", "/run/nvidia-persistenced"]
        if view.gpu:
            args += (self.gpu or every_node("no GPU identified")).mounts()
        args += self._view_mounts(view, binds)
        args += ["--chdir", str(view.cwd or "/tmp"), "--", self.setpriv,
                 f"--reuid={user.uid}", f"--regid={user.gid}", "--clear-groups", "--no-new-privs"]
        if self.drop_caps:
            args += ["--inh-caps=-all", "--bounding-set=-all"]
        return args + ["--", *argv]

    def _view_mounts(self, view: View, binds: list[tuple[Path, Path]]) -> list[str]:
        """The view's binds and the masks of hidden paths and denied libraries, shallowest first: bwrap
        applies them in order and a later mount covers an earlier one, so the deepest entry wins. A harness
        folder inside the hidden repository stays visible; a hidden folder inside a shown one stays hidden."""
        entries = [(_real(p), "--ro-bind") for p in view.read_only] + [(_real(p), "--bind") for p in view.writable]
        shown = {path for path, _ in entries}
        roots = binds + [(path, path) for path in shown]   # the view's paths are seen where they are
        masked = set()
        for path in (*map(_real, (*self.hidden, *view.hidden)), *self.denied):
            # Only where something shows it: elsewhere the sandbox root is already empty. A file is covered
            # by /dev/null on a nodev mount, so opening it fails (EACCES) rather than show it.
            if path in shown or not os.path.lexists(path):
                continue
            how = "--tmpfs" if path.is_dir() else "/dev/null"
            for real, seen in roots:
                if _within(path, real) and (where := seen / path.relative_to(real)) not in masked:
                    masked.add(where)
                    entries.append((where, how))
        # bwrap would make the missing parents of a mount point with mode 0700, which the run's uid cannot
        # cross; --dir makes them 0755 (and does nothing where the folder is already there).
        parents = {parent for path, _ in entries for parent in path.parents if parent != Path("/")} - shown
        entries += [(parent, "--dir") for parent in sorted(parents)]
        entries.sort(key=lambda entry: len(entry[0].parts))  # stable: a mask stays before a --dir of its path
        args = []
        for path, how in entries:
            if how in ("--tmpfs", "--dir"):
                args += [how, str(path)]
            elif how == "/dev/null":
                args += ["--ro-bind", "/dev/null", str(path)]
            else:
                args += [how, str(path), str(path)]
        return args

    def environment(self, passthrough: Mapping[str, str]) -> dict[str, str]:
        """Only the whitelisted variables of `passthrough`, plus HOME and TMPDIR: no grader settings,
        tokens or paths reach student code. A sandbox that sees one GPU sees it as device 0."""
        env = {name: passthrough[name] for name in ENV_PASSTHROUGH if name in passthrough}
        env.setdefault("PATH", DEFAULT_PATH)
        env.update(HOME="/tmp", TMPDIR="/tmp")
        if self.enabled and self.gpu is not None and self.gpu.isolated:
            env["CUDA_VISIBLE_DEVICES"] = "0"
        return env

    def preexec(self, limits: Limits) -> Callable[[], None]:
        """For Popen(preexec_fn=...): sets the rlimits in the child. bwrap runs as root, which
        RLIMIT_NPROC does not bind; it binds the run's processes after setpriv, counted over its uid:
        the run's own. Unsandboxed, the processes would be counted with every process of the grader's
        own user (a desktop has hundreds of threads), so RLIMIT_NPROC is left out there."""
        wanted = [(resource.RLIMIT_FSIZE, limits.file_bytes), (resource.RLIMIT_DATA, limits.memory_bytes),
                  (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_CORE, limits.core_bytes)]
        if self.enabled:
            wanted.append((resource.RLIMIT_NPROC, limits.processes))

        def set_limits() -> None:
            join_new_session_keyring()   # not the grader's: its keys are out of reach even without the filter
            for which, value in wanted:
                try:
                    hard = resource.getrlimit(which)[1]
                    if hard != resource.RLIM_INFINITY:
                        value = min(value, hard)  # never above the current hard limit
                    resource.setrlimit(which, (value, value))
                except (OSError, ValueError):  # EPERM or an unknown limit: run with what there is
                    pass
        return set_limits


@functools.cache
def _tools(bwrap: str, setpriv: str) -> tuple[str, bool]:
    """(bubblewrap's version, whether setpriv drops capabilities): once a process."""
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                                 timeout=SELF_TEST_TIMEOUT_S).stdout.strip() or "bubblewrap"
        usage = subprocess.run([setpriv, "--help"], capture_output=True, text=True, timeout=SELF_TEST_TIMEOUT_S).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap", False
    return version, "--inh-caps" in usage and "--bounding-set" in usage
