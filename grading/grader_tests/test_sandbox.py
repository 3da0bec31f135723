"""The sandbox around student code: what a run can see, who it runs as, and what stops it (real runs
under bubblewrap when this machine is root and has it; the command line and degraded mode always)."""

import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from grader_tests.helpers import REPO
from grader.sandbox import ENV_PASSTHROUGH, SANDBOX_UID, Limits, Sandbox, View

MIB = 1 << 20
ALLOWED_ENV = set(ENV_PASSTHROUGH) | {"HOME", "TMPDIR", "PWD"}  # PWD: bwrap sets it after --chdir


class SandboxCase(unittest.TestCase):
    sandbox = Sandbox(enabled=False, reason="not detected yet")

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sandbox-test-")).resolve()
        self.tmp.chmod(0o755)  # mkdtemp makes it 0700: uid 65534 could not read it when it is shown
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def folder(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir(parents=True)
        return path

    def run_in(self, argv, view=View(), limits=Limits(), **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("timeout", 20)
        return subprocess.run(self.sandbox.command(argv, view), env=self.sandbox.environment(os.environ),
                              preexec_fn=self.sandbox.preexec(limits), text=True, **kwargs)

    def sh(self, script: str, view=View(), limits=Limits()) -> subprocess.CompletedProcess:
        return self.run_in(["sh", "-c", script], view, limits)


class TestWithoutTheSandbox(SandboxCase):
    """Degraded mode and the command line: no root or bubblewrap needed."""

    def test_degraded_mode_runs_the_command_as_it_is_and_says_so(self):
        sandbox = Sandbox(enabled=False, reason="test")
        view = View(read_only=(self.tmp,), writable=(self.tmp,), gpu=True, cwd=self.tmp)
        self.assertEqual(sandbox.command(["nvcc", "-c", "x.cu"], view), ["nvcc", "-c", "x.cu"])
        self.assertEqual(sandbox.describe(), "UNSANDBOXED: test")
        mode = self.tmp.stat().st_mode
        sandbox.prepare_scratch(self.tmp)
        self.assertEqual(self.tmp.stat().st_mode, mode, "degraded mode must not chown or chmod scratch folders")

    def test_degraded_mode_still_limits_file_size(self):
        out = self.tmp / "flood.out"
        with open(out, "wb") as handle:
            result = subprocess.run(["head", "-c", str(2 * MIB), "/dev/zero"], stdout=handle, timeout=20,
                                    preexec_fn=Sandbox(enabled=False, reason="test").preexec(Limits(file_bytes=MIB)))
        self.assertNotEqual(result.returncode, 0, "a 2 MiB write under a 1 MiB RLIMIT_FSIZE must fail")
        self.assertLessEqual(out.stat().st_size, MIB)

    def test_environment_keeps_only_the_whitelist(self):
        parent = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0", "HOME": "/root",
                  "REDUCTION_CALL_TIMEOUT_S": "5", "GITHUB_TOKEN": "secret", "LD_PRELOAD": "/x.so"}
        env = Sandbox(enabled=False, reason="test").environment(parent)
        self.assertEqual(env, {"PATH": "/usr/bin", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0",
                               "HOME": "/tmp", "TMPDIR": "/tmp"})

    def test_detect_needs_root_and_bwrap(self):
        with mock.patch("os.geteuid", return_value=1000):
            sandbox = Sandbox.detect([self.tmp])
        self.assertFalse(sandbox.enabled)
        self.assertTrue(sandbox.reason.startswith("not root"), sandbox.reason)
        self.assertTrue(sandbox.describe().startswith("UNSANDBOXED: not root"))
        with mock.patch("os.geteuid", return_value=0), mock.patch("shutil.which", return_value=None):
            sandbox = Sandbox.detect([self.tmp])
        self.assertFalse(sandbox.enabled)
        self.assertTrue(sandbox.reason.startswith("bwrap not found"), sandbox.reason)

    def test_hidden_paths_are_masked_before_the_view_is_bound_on_top(self):
        repo, harness = self.folder("repo"), self.folder("repo/common")
        sandbox = Sandbox(enabled=True, hidden=(repo, Path("/etc/passwd"), Path("/srv/elsewhere")))
        command = sandbox.command(["true"], View(read_only=(self.tmp, harness)))
        self.assertNotIn("/", [command[i + 1] for i, arg in enumerate(command) if arg in ("--bind", "--ro-bind")],
                         "the whole root must never be bound")

        def position(*args):
            for i in range(len(command)):
                if command[i:i + len(args)] == list(args):
                    return i
            self.fail(f"{' '.join(args)} not in {command}")
        self.assertLess(position("--ro-bind", "/etc", "/etc"), position("--ro-bind", "/dev/null", "/etc/passwd"))
        self.assertLess(position("--ro-bind", str(self.tmp), str(self.tmp)), position("--tmpfs", str(repo)))
        self.assertLess(position("--tmpfs", str(repo)), position("--ro-bind", str(harness), str(harness)))
        self.assertLess(position("--tmpfs", "/tmp"), position("--ro-bind", str(self.tmp), str(self.tmp)))
        self.assertNotIn("/srv/elsewhere", command, "a hidden path nothing shows needs no mask")
        self.assertLess(position("--ro-bind", str(harness), str(harness)), position("--reuid=65534"))
        self.assertEqual(command[-2:], ["--", "true"])


class TestSandboxedRuns(SandboxCase):
    """Real runs under bubblewrap; skipped where this machine cannot sandbox."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")

    def test_runs_as_nobody_without_capabilities_and_cannot_write_read_only_paths(self):
        shown = self.folder("shown")
        (shown / "file.txt").write_text("original")
        result = self.sh(f"id -u; id -g; grep -E 'CapEff|CapBnd' /proc/self/status; "
                         f"echo changed > {shown}/file.txt || echo write-failed; "
                         "touch /usr/x 2>/dev/null || echo usr-failed", View(read_only=(shown,)))
        lines = result.stdout.split("\n")
        self.assertEqual(lines[:2], [str(SANDBOX_UID), str(SANDBOX_UID)], result.stderr)
        self.assertEqual(lines[2].split(), ["CapEff:", "0000000000000000"])
        if self.sandbox.drop_caps:
            self.assertEqual(lines[3].split(), ["CapBnd:", "0000000000000000"])
        self.assertIn("write-failed", result.stdout)
        self.assertIn("usr-failed", result.stdout)
        self.assertEqual((shown / "file.txt").read_text(), "original")

    def test_hidden_paths_are_empty_inside_a_shown_folder_except_what_the_view_names(self):
        repo, harness = self.folder("repo"), self.folder("repo/harness")
        (self.tmp / "visible.txt").write_text("visible\n")
        (repo / "secret.txt").write_text("solution-1234")
        (harness / "header.h").write_text("harness-5678")
        (self.tmp / "key.txt").write_text("key-9012")
        sandbox = Sandbox.detect(hidden=[repo, self.tmp / "key.txt"])
        view = View(read_only=(self.tmp, harness))
        result = subprocess.run(sandbox.command(["sh", "-c", f"cat {self.tmp}/visible.txt {repo}/secret.txt; "
                                                 f"ls -A {repo}; cat {harness}/header.h {self.tmp}/key.txt"], view),
                                env=sandbox.environment(os.environ), capture_output=True, text=True, timeout=20)
        self.assertIn("visible", result.stdout, result.stderr)
        self.assertIn("harness-5678", result.stdout, "a view entry inside a hidden folder must stay visible")
        self.assertNotIn("solution-1234", result.stdout)
        self.assertNotIn("key-9012", result.stdout)
        self.assertEqual(result.stdout.split(), ["visible", "harness", "harness-5678"])

    def test_a_view_can_hide_a_folder_of_what_it_shows(self):
        # the graded compile shows the CUDA toolkit but not its include/cccl (CUB, Thrust)
        toolkit, library = self.folder("toolkit"), self.folder("toolkit/include/cccl")
        (toolkit / "nvcc.txt").write_text("compiler")
        (library / "cub.h").write_text("library-3456")
        result = self.sh(f"cat {toolkit}/nvcc.txt; cat {library}/cub.h 2>/dev/null; ls -A {library}",
                         View(read_only=(toolkit,), hidden=(library,)))
        self.assertEqual(result.stdout.split(), ["compiler"], result.stderr)

    def test_a_folder_of_the_hidden_repository_can_be_shown(self):
        grader = REPO / "grading" / "grader"
        result = self.sh(f"ls -A {REPO} {REPO}/grading; head -n 1 {grader}/sandbox.py; "
                         f"test -e {REPO}/README.md && echo readme-visible", View(read_only=(grader,)))
        first_line = (grader / "sandbox.py").read_text(encoding="utf-8").split("\n", 1)[0]
        expected = [f"{REPO}:", "grading", "", f"{REPO}/grading:", "grader", first_line]
        self.assertEqual(result.stdout.split("\n")[:-1], expected, result.stderr)

    def test_grader_folders_are_invisible(self):
        folders = ["/root", "/work", "/home", "/var", "/srv", "/mnt", "/media", str(REPO)]
        result = self.sh("for p in " + " ".join(folders) + "; do test -e $p && echo visible: $p; done; "
                         "test -d /usr/bin && echo usr-ok")
        self.assertEqual(result.stdout.split("\n")[:-1], ["usr-ok"], result.stderr)

    def test_there_is_no_network(self):
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            server.settimeout(0.2)
            port = server.getsockname()[1]
            result = self.sh(f"cat /proc/net/dev; bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null "
                             "&& echo connected")
            with self.assertRaises(socket.timeout, msg="the sandbox reached the host's loopback"):
                server.accept()[0].close()
        interfaces = [line.split(":")[0].strip() for line in result.stdout.splitlines() if ":" in line]
        self.assertEqual(interfaces, ["lo"], result.stdout)
        self.assertNotIn("connected", result.stdout)

    def test_background_processes_die_with_the_run(self):
        scratch = self.folder("scratch")
        marker = scratch / "late.txt"
        tag = f"{900000 + os.getpid() % 10000}.5"
        # Their output goes to /dev/null: a survivor holding the pipe would make run() wait for it.
        script = (f"setsid sleep {tag} >/dev/null 2>&1 & "
                  f"setsid sh -c 'sleep 0.5; echo late > {marker}' >/dev/null 2>&1 & echo started")
        try:
            result = self.run_in(["sh", "-c", script], View(writable=(scratch,)), timeout=5)
        except subprocess.TimeoutExpired:
            self.fail("the run waited for its background processes (bwrap without --die-with-parent)")
        self.assertEqual(result.stdout, "started\n", result.stderr)
        for _ in range(20):
            if not _survivors(tag):
                break
            time.sleep(0.1)
        self.assertEqual(_survivors(tag), [], "a process started in the background outlived the run")
        time.sleep(0.8)
        self.assertFalse(marker.exists(), "a background shell wrote a file after the run ended")

    def test_killing_the_run_kills_everything_it_started(self):
        tag = f"{800000 + os.getpid() % 10000}.5"
        process = subprocess.Popen(self.sandbox.command(["sh", "-c", f"setsid sleep {tag} & sleep 100"], View()),
                                   env=self.sandbox.environment(os.environ), start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(process.wait)
        for _ in range(50):  # until the background sleep runs
            if _survivors(tag):
                break
            time.sleep(0.05)
        self.assertTrue(_survivors(tag), "the background sleep never started")
        os.killpg(process.pid, signal.SIGKILL)  # what the grader does on a timeout
        process.wait(timeout=5)
        for _ in range(20):
            if not _survivors(tag):
                break
            time.sleep(0.1)
        self.assertEqual(_survivors(tag), [], "a process of a killed run is still running")

    def test_file_size_limit_stops_a_flood(self):
        out = self.tmp / "stdout.txt"
        with open(out, "wb") as handle:
            result = self.run_in(["head", "-c", str(2 * MIB), "/dev/zero"], limits=Limits(file_bytes=MIB),
                                 capture_output=False, stdout=handle, stderr=subprocess.DEVNULL)
        self.assertEqual(out.stat().st_size, MIB)
        self.assertIn(result.returncode, (128 + signal.SIGXFSZ, -signal.SIGXFSZ, 1))

    def test_process_limit_stops_a_fork_bomb(self):
        script = "for i in $(seq 60); do sleep 5 & done; echo all-started"
        result = self.sh(script, limits=Limits(processes=20))
        self.assertNotIn("all-started", result.stdout, "60 processes started under RLIMIT_NPROC = 20")
        self.assertNotEqual(result.returncode, 0)
        control = self.sh(script)
        self.assertIn("all-started", control.stdout, control.stderr)

    def test_environment_has_only_the_whitelist(self):
        with mock.patch.dict(os.environ, {"REDUCTION_SECRET_TOKEN": "hunter2", "LANG": "C.UTF-8"}):
            result = self.run_in(["env"])
        names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
        self.assertNotIn("hunter2", result.stdout)
        self.assertLessEqual(names, ALLOWED_ENV, result.stdout)
        self.assertIn("HOME=/tmp", result.stdout.splitlines())
        self.assertIn("LANG=C.UTF-8", result.stdout.splitlines())

    def test_writable_scratch_belongs_to_the_run_and_starts_it_there(self):
        scratch = self.folder("scratch")
        result = self.sh("pwd; echo made > out.txt; touch /tmp/own-tmp && echo tmp-ok; "
                         f"touch {self.tmp}/outside 2>/dev/null || echo outside-failed",
                         View(writable=(scratch,), cwd=scratch))
        self.assertEqual(result.stdout.split(), [str(scratch), "tmp-ok", "outside-failed"], result.stderr)
        self.assertEqual((scratch / "out.txt").read_text(), "made\n")
        self.assertEqual((scratch / "out.txt").stat().st_uid, SANDBOX_UID)
        self.assertEqual((scratch.stat().st_uid, stat.S_IMODE(scratch.stat().st_mode)), (SANDBOX_UID, 0o700))


def _survivors(tag: str) -> list[str]:
    """The host pids of `sleep TAG` processes that are still running (zombies excepted)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == f"sleep\0{tag}\0".encode():
            found.append(pid)
    return found


if __name__ == "__main__":
    unittest.main()
