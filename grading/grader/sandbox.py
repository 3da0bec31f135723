"""The sandbox around every compile and run of student code: bubblewrap, then setpriv.

Student code is hostile: it wants points. Each run sees the system folders read-only, its own empty
/tmp, /run and /dev/shm, and only the paths its View names; the grader's folders (the repository,
the build tree, the outputs, the other submissions) are not there at all. It runs as uid 65534 with
no capabilities, in its own PID, network, IPC and UTS namespaces: it cannot reach the network or
another run, and everything it starts dies with it. Resource limits are rlimits set before exec.

bubblewrap does the mounts and namespaces (as root, so no user namespace is needed); setpriv drops
to the unprivileged user last, because mounting needs root. Without root or bubblewrap the grader
still works, unsandboxed (degraded mode), and every report says so through describe().

Callers run: subprocess.Popen(sandbox.command(argv, view), env=sandbox.environment(os.environ),
preexec_fn=sandbox.preexec(limits), cwd=view.cwd, ...). The env must be exactly environment()'s
result, not merged into os.environ.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

SANDBOX_UID = SANDBOX_GID = 65534  # nobody / nogroup
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt", "/sys")  # /sys: the CUDA driver
ENV_PASSTHROUGH = ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH",
                   "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LANG", "LC_ALL")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
SHM_BYTES = 256 << 20
SELF_TEST_TIMEOUT_S = 10


@dataclass(frozen=True)
class Limits:
    file_bytes: int = 64 << 20      # RLIMIT_FSIZE: no file (stdout/stderr redirected to files included) grows past this
    processes: int = 512            # RLIMIT_NPROC: threads count too, summed over every run of uid 65534 at once
    memory_bytes: int = 32 << 30    # RLIMIT_DATA (not RLIMIT_AS: CUDA reserves huge virtual ranges and fails under it)
    open_files: int = 4096          # RLIMIT_NOFILE
    core_bytes: int = 0             # RLIMIT_CORE


@dataclass(frozen=True)
class View:
    """What one sandboxed run may see besides the system folders."""
    read_only: tuple[Path, ...] = ()   # files or folders, visible read-only at the same path (modes unchanged:
                                       # uid 65534 reads them as "others")
    writable: tuple[Path, ...] = ()    # scratch folders, read-write at the same path (the caller creates them)
    gpu: bool = False                  # bind the NVIDIA device nodes
    cwd: Path | None = None            # inside the sandbox; /tmp when None
    tmp_bytes: int = 1 << 30           # size of the run's own /tmp (a tmpfs: memory no rlimit counts)
    hidden: tuple[Path, ...] = ()      # masked in this run too, beside the sandbox's own hidden paths


def _real(path: str | os.PathLike) -> Path:
    return Path(path).resolve()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _gpu_mounts() -> list[str]:
    """The NVIDIA device nodes (/dev/nvidia0, nvidiactl, nvidia-uvm, ...) and /dev/nvidia-caps."""
    args = []
    for name in sorted(os.listdir("/dev")):
        path = f"/dev/{name}"
        if name.startswith("nvidia") and os.path.exists(path) and (stat.S_ISCHR(os.stat(path).st_mode)
                                                                   or name == "nvidia-caps"):
            args += ["--dev-bind", path, path]
    return args


@dataclass(frozen=True)
class Sandbox:
    enabled: bool                      # False: degraded mode, commands run as they are
    reason: str = ""                   # when not enabled: why
    hidden: tuple[Path, ...] = ()      # masked wherever they would otherwise be visible
    bwrap: str = "bwrap"
    setpriv: str = "setpriv"
    version: str = ""                  # "bubblewrap 0.8.0"
    drop_caps: bool = False            # this setpriv knows --inh-caps and --bounding-set

    @classmethod
    def detect(cls, hidden: Iterable[Path] = ()) -> Sandbox:
        """The sandbox of this machine: enabled only as root, with bwrap and setpriv that pass a self-test."""
        hidden = tuple(_real(path) for path in hidden)
        if os.geteuid() != 0:
            return cls(False, "not root (setpriv needs root to drop to uid 65534)", hidden)
        bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
        if not bwrap:
            return cls(False, "bwrap not found (install the bubblewrap package)", hidden)
        if not setpriv:
            return cls(False, "setpriv not found (install util-linux)", hidden)
        version, drop_caps, error = _self_test(bwrap, setpriv)
        if error:
            return cls(False, f"bwrap failed its self-test: {error}", hidden)
        return cls(True, "", hidden, bwrap, setpriv, version, drop_caps)

    def describe(self) -> str:
        if not self.enabled:
            return f"UNSANDBOXED: {self.reason}"
        return f"{self.version}, uid {SANDBOX_UID}, pid/net/ipc/uts namespaces"

    def prepare_scratch(self, path: Path) -> None:
        """Gives a writable folder to the sandbox user (owner 65534, mode 0700). Only the folder itself:
        what the caller put in it stays the caller's (readable, replaceable, not writable in place), and
        a recursive chown could follow a hard link a student left there to a file outside."""
        if not self.enabled:
            return
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            raise ValueError(f"scratch folder {path} is not a folder")
        os.chown(path, SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)
        os.chmod(path, 0o700)

    def command(self, argv: list[str], view: View) -> list[str]:
        """The full argv to exec for `argv` under `view` (argv unchanged when not enabled). Chowns the
        view's writable folders to the sandbox user."""
        if not self.enabled:
            return list(argv)
        for folder in view.writable:
            self.prepare_scratch(folder)
        args = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--die-with-parent", "--new-session"]
        bound = []
        for folder in map(Path, SYSTEM_FOLDERS):
            if not folder.exists():
                continue
            target = folder.resolve()
            if folder.is_symlink() and _within(target, Path("/usr")):  # merged /usr: /bin -> usr/bin
                args += ["--symlink", os.readlink(folder), str(folder)]
            else:
                args += ["--ro-bind", str(target), str(folder)]
            bound.append(target)
        # The run's own /dev (null, zero, tty, ...), /proc (its PID namespace only) and empty /tmp, /run.
        args += ["--dev", "/dev", "--proc", "/proc",
                 "--perms", "1777", "--size", str(view.tmp_bytes), "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm", "--tmpfs", "/run"]
        if os.path.exists("/run/nvidia-persistenced"):
            args += ["--ro-bind", "/run/nvidia-persistenced", "/run/nvidia-persistenced"]
        if view.gpu:
            args += _gpu_mounts()
        args += self._view_mounts(view, bound)
        args += ["--chdir", str(view.cwd or "/tmp"), "--", self.setpriv,
                 f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups", "--no-new-privs"]
        if self.drop_caps:
            args += ["--inh-caps=-all", "--bounding-set=-all"]
        return args + ["--", *argv]

    def _view_mounts(self, view: View, bound: list[Path]) -> list[str]:
        """The view's binds and the masks of hidden paths, shallowest first: bwrap applies them in
        order and a later mount covers an earlier one, so the deepest entry wins. A harness folder
        inside the hidden repository stays visible; a hidden folder inside a shown one stays hidden."""
        entries = [(_real(p), "--ro-bind") for p in view.read_only] + [(_real(p), "--bind") for p in view.writable]
        shown = {path for path, _ in entries}
        roots = bound + list(shown)
        for path in map(_real, (*self.hidden, *view.hidden)):
            # Only where something would show it: elsewhere the sandbox root is already empty. A file is
            # covered by /dev/null on a nodev mount, so reading it fails (EACCES) rather than show it.
            if path not in shown and os.path.lexists(path) and any(_within(path, root) for root in roots):
                entries.append((path, "--tmpfs" if path.is_dir() else "/dev/null"))
        # bwrap would make the missing parents of a mount point with mode 0700, which uid 65534 cannot
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
        tokens or paths reach student code."""
        env = {name: passthrough[name] for name in ENV_PASSTHROUGH if name in passthrough}
        env.setdefault("PATH", DEFAULT_PATH)
        env.update(HOME="/tmp", TMPDIR="/tmp")
        return env

    def preexec(self, limits: Limits) -> Callable[[], None]:
        """For Popen(preexec_fn=...): sets the rlimits in the child. bwrap runs as root, which
        RLIMIT_NPROC does not bind; it binds the uid-65534 processes after setpriv. Unsandboxed, the
        processes would be counted with every process of the grader's own user (a desktop has
        hundreds of threads), so RLIMIT_NPROC is left out there."""
        wanted = [(resource.RLIMIT_FSIZE, limits.file_bytes), (resource.RLIMIT_DATA, limits.memory_bytes),
                  (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_CORE, limits.core_bytes)]
        if self.enabled:
            wanted.append((resource.RLIMIT_NPROC, limits.processes))

        def set_limits() -> None:
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
def _self_test(bwrap: str, setpriv: str) -> tuple[str, bool, str]:
    """(version, setpriv drops capabilities, error): runs `id -u` in the full sandbox, once a process."""
    try:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                                 timeout=SELF_TEST_TIMEOUT_S).stdout.strip() or "bubblewrap"
        usage = subprocess.run([setpriv, "--help"], capture_output=True, text=True, timeout=SELF_TEST_TIMEOUT_S).stdout
        drop_caps = "--inh-caps" in usage and "--bounding-set" in usage
        probe = Sandbox(True, "", (), bwrap, setpriv, version, drop_caps)
        result = subprocess.run(probe.command([shutil.which("id") or "/usr/bin/id", "-u"], View()),
                                env=probe.environment(os.environ), capture_output=True, text=True,
                                timeout=SELF_TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "", False, f"no answer within {SELF_TEST_TIMEOUT_S} s"
    except OSError as exc:
        return "", False, str(exc)
    if result.returncode != 0 or result.stdout.strip() != str(SANDBOX_UID):
        detail = (result.stderr.strip().splitlines() or [f"printed {result.stdout.strip()!r}"])[-1]
        return "", False, f"exit status {result.returncode}: {detail}"
    return version, drop_caps, ""
