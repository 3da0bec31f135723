"""Real runs under bubblewrap, when this machine is root and has it: what a run can see, who it runs
as, and what stops it."""

import os
import shutil
import signal
import socket
import stat
import subprocess
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

from grader_tests.helpers import REPO
from grader_tests.sandbox_fixtures import MIB, SandboxCase, _real_toolchain
from grader.sandbox.run_users import RUN_UIDS, SHARED_UID, RunUser, UidPool
from grader.sandbox.bubblewrap import ENV_PASSTHROUGH, Limits, Sandbox, View

ALLOWED_ENV = set(ENV_PASSTHROUGH) | {"HOME", "TMPDIR", "PWD"}  # PWD: bwrap sets it after --chdir


class TestSandboxedRuns(SandboxCase):
    """Real runs under bubblewrap; skipped where this machine cannot sandbox."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")

    def test_runs_as_its_own_uid_without_capabilities_and_cannot_write_read_only_paths(self):
        shown = self.folder("shown")
        (shown / "file.txt").write_text("original")
        result = self.sh(f"id -u; id -g; grep -E 'CapEff|CapBnd' /proc/self/status; "
                         f"echo changed > {shown}/file.txt || echo write-failed; "
                         "touch /usr/x 2>/dev/null || echo usr-failed", View(read_only=(shown,)))
        lines = result.stdout.split("\n")
        self.assertEqual(lines[:2], [str(self.user.uid), str(self.user.gid)], result.stderr)
        self.assertIn(self.user.uid, RUN_UIDS, self.sandbox.describe())
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
        result = self.run_in(["sh", "-c", f"cat {self.tmp}/visible.txt {repo}/secret.txt; "
                              f"ls -A {repo}; cat {harness}/header.h {self.tmp}/key.txt"], view, sandbox=sandbox)
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
        result = self.sh(f"ls -A {REPO} {REPO}/grading; head -n 1 {grader}/policy.py; "
                         f"test -e {REPO}/README.md && echo readme-visible", View(read_only=(grader,)))
        first_line = (grader / "policy.py").read_text(encoding="utf-8").split("\n", 1)[0]
        expected = [f"{REPO}:", "grading", "", f"{REPO}/grading:", "grader", first_line]
        self.assertEqual(result.stdout.split("\n")[:-1], expected, result.stderr)

    def test_grader_folders_are_invisible(self):
        folders = ["/root", "/work", "/home", "/var", "/srv", "/mnt", "/media", str(REPO)]
        result = self.sh("for p in " + " ".join(folders) + "; do test -e $p && echo visible: $p; done; "
                         "test -d /usr/bin && echo usr-ok")
        self.assertEqual(result.stdout.split("\n")[:-1], ["usr-ok"], result.stderr)

    def test_the_cgroup_tree_is_hidden(self):
        if not os.path.isdir("/sys/fs/cgroup") or not os.listdir("/sys/fs/cgroup"):
            self.skipTest("no cgroup tree on this machine to hide")
        result = self.sh("ls -A /sys/fs/cgroup | wc -l; test -d /sys/devices && echo sys-ok")
        self.assertEqual(result.stdout.split(), ["0", "sys-ok"], result.stderr)

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
        lease, fds = self.sandbox.run_user(), self.enterContext(self.sandbox.seccomp_fds())
        process = subprocess.Popen(self.sandbox.command(["sh", "-c", f"setsid sleep {tag} & sleep 100"], View(),
                                                        self.enterContext(lease), fds),
                                   env=self.sandbox.environment(os.environ), start_new_session=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=fds)
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
        self.assertEqual((scratch / "out.txt").stat().st_uid, self.user.uid)
        self.assertEqual((scratch.stat().st_uid, scratch.stat().st_gid, stat.S_IMODE(scratch.stat().st_mode)),
                         (self.user.uid, self.user.gid, 0o700))

    def test_a_fork_bomb_takes_only_its_own_process_slots(self):
        # A run that forks until fork fails and holds what it started, and beside it an honest run that
        # forks a few processes, as nvcc does: with a uid per run the honest one succeeds 10 times of 10.
        # When both runs are one uid (as every run was before), the same honest run fails: the test can fail.
        limits = Limits(processes=64)
        honest = ["sh", "-c", "for i in 1 2 3 4 5 6; do sleep 0.01 & done; wait; echo honest-ok"]

        def honest_as(user: RunUser) -> subprocess.CompletedProcess:
            with self.sandbox.seccomp_fds() as fds:   # each run reads its filter from a descriptor of its own
                return subprocess.run(self.sandbox.command(honest, View(), user, fds), capture_output=True, text=True,
                                      env=self.sandbox.environment(os.environ), timeout=20, pass_fds=fds,
                                      preexec_fn=self.sandbox.preexec(limits))

        def beside_a_fork_bomb(shared: RunUser | None) -> list[str]:
            with self.sandbox.run_user() as user, self.sandbox.seccomp_fds() as fds:
                bomb = subprocess.Popen(self.sandbox.command(["sh", "-c", FORK_BOMB], View(), shared or user, fds),
                                        env=self.sandbox.environment(os.environ), text=True, pass_fds=fds,
                                        preexec_fn=self.sandbox.preexec(limits), stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
                try:
                    self.assertEqual(bomb.stdout.readline(), "full\n", "the fork bomb did not fill its slots")
                    if shared is None:
                        runs = [self.run_in(honest, limits=limits) for _ in range(10)]
                    else:
                        runs = [honest_as(shared) for _ in range(10)]
                    return [run.stdout if run.stdout == "honest-ok\n" else run.stderr.strip() for run in runs]
                finally:
                    os.killpg(bomb.pid, signal.SIGKILL)
                    bomb.wait()
                    bomb.stdout.close()

        outcomes = beside_a_fork_bomb(None)
        self.assertEqual(outcomes, ["honest-ok\n"] * 10, "honest runs failed beside a fork bomb")
        with self.sandbox.run_user() as shared:   # a uid no other run has, given to both runs here
            self.assertNotIn("honest-ok\n", beside_a_fork_bomb(shared),
                             "sharing the bomb's uid, the honest run should have found no process slot")

    def test_without_the_uid_range_every_run_is_uid_65534_and_says_why(self):
        with mock.patch("grader.sandbox.bubblewrap.UidPool", side_effect=OSError("no lock folder here")):
            sandbox = Sandbox.detect(hidden=[REPO])
        self.assertIn(f"uid {SHARED_UID} for every run (no uid range: no lock folder here)", sandbox.describe())
        self.assertEqual(self.run_in(["id", "-u"], sandbox=sandbox).stdout, f"{SHARED_UID}\n")
        # A range setpriv cannot switch to (uid 2^32 - 1 is "no change" to the kernel): the self-test sees it.
        unusable = UidPool(range(2**32 - 1, 2**32), self.tmp / "locks")
        with mock.patch("grader.sandbox.bubblewrap.UidPool", return_value=unusable):
            sandbox = Sandbox.detect(hidden=[REPO])
        self.assertTrue(sandbox.enabled, sandbox.reason)
        self.assertIn(f"uid {SHARED_UID} for every run (setpriv to uid 4294967295-4294967295 failed:",
                      sandbox.describe())

    def test_concurrent_runs_have_different_uids(self):
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: self.sh("id -u; sleep 1"), range(4)))
        uids = {int(result.stdout) for result in results}
        self.assertEqual(len(uids), 4, [result.stderr for result in results])
        self.assertLessEqual(uids, set(RUN_UIDS))
        self.assertIn(f"uid per run ({RUN_UIDS.start}-{RUN_UIDS.stop - 1})", self.sandbox.describe())

    def test_an_inherited_descriptor_reaches_the_sandboxed_program(self):
        # The runner reports to the grader on a pipe handed over with Popen(pass_fds=...): neither
        # bubblewrap nor setpriv may close it or give it another number.
        read, write = os.pipe()
        try:
            result = self.run_in(["sh", "-c", f"echo report >&{write}; echo out"], pass_fds=(write,))
        finally:
            os.close(write)
        with os.fdopen(read) as pipe:
            self.assertEqual(pipe.read(), "report\n", result.stderr)
        self.assertEqual(result.stdout, "out\n")

    def test_denied_libraries_cannot_be_opened_and_the_runtime_can(self):
        lib, site = self.folder("cuda/lib64"), self.folder("site-packages/nvidia/cublas/lib")
        for folder, name in ((lib, "libcublas.so.13"), (lib, "libnvrtc.so.13"), (lib, "libcudart.so.13"),
                             (site, "libcublas.so.12"), (lib, "libcuda.so.1")):
            (folder / name).write_bytes(b"\x7fELF " + name.encode())
        (lib / "libcublas.so").symlink_to("libcublas.so.13")
        (lib / "libcudart.so").symlink_to("libcudart.so.13")
        (lib / "renamed.so").symlink_to("libnvrtc.so.13")   # a link by another name leads to the masked file
        sandbox = Sandbox.detect(hidden=[REPO], library_folders=[self.tmp])
        names = ["cuda/lib64/libcublas.so", "cuda/lib64/libcublas.so.13", "cuda/lib64/renamed.so",
                 "site-packages/nvidia/cublas/lib/libcublas.so.12", "cuda/lib64/libcudart.so", "cuda/lib64/libcuda.so.1"]
        script = "; ".join(f"head -c 4 {self.tmp / name} >/dev/null 2>&1 && echo open || echo denied" for name in names)
        result = self.run_in(["sh", "-c", script], View(read_only=(self.tmp,), etc="minimal"), sandbox=sandbox)
        self.assertEqual(result.stdout.split(), ["denied"] * 4 + ["open"] * 2, result.stderr)
        self.assertEqual((lib / "libcublas.so.13").read_bytes()[:4], b"\x7fELF", "the grader still reads it")
        # This machine's own: a denied library it has cannot be loaded, its CUDA runtime can.
        python = Path("/usr/bin/python3")
        runtime = sorted(set(Path("/usr/local/cuda/lib64").glob("libcudart.so.*")) - set(sandbox.denied))[:1]
        denied = [path for path in sandbox.denied if not path.is_relative_to(self.tmp) and ".so" in path.name][:1]
        if not python.exists() or not runtime or not denied:
            self.skipTest("no /usr/bin/python3, CUDA runtime or denied library here to load for real")
        load = "import ctypes, sys\nfor path in sys.argv[1:]:\n    try:\n        ctypes.CDLL(path); print('loaded')\n" \
               "    except OSError:\n        print('refused')\n"
        result = self.run_in([str(python), "-c", load, str(runtime[0]), str(denied[0])], View(etc="minimal"),
                             sandbox=sandbox)
        self.assertEqual(result.stdout.split(), ["loaded", "refused"], result.stderr)

    def test_a_minimal_etc_runs_programs_and_shows_no_file_of_the_machine(self):
        ldd = shutil.which("ldd")
        if ldd:   # ls is a dynamically linked program: the loader needs its cache
            self.assertIn("=>", subprocess.run([ldd, shutil.which("ls")], capture_output=True, text=True).stdout)
        cache = "ldconfig -p | head -n 1" if Path("/sbin/ldconfig").exists() else "echo no-ldconfig"
        script = (f"/usr/bin/true && echo true-ok; ls / >/dev/null && echo ls-ok; id -un; {cache}; "
                  "cat /etc/hostname 2>/dev/null || echo no-hostname; ls -A /etc | tr '\\n' ' '; echo; cat /etc/passwd")
        result = self.sh(script, View(etc="minimal"))
        lines = result.stdout.splitlines()
        self.assertEqual(lines[:3], ["true-ok", "ls-ok", "sandbox"], result.stderr)
        if Path("/sbin/ldconfig").exists():
            host = subprocess.run("ldconfig -p | head -n 1", shell=True, capture_output=True, text=True).stdout
            self.assertEqual(lines[3], host.strip(), "the loader's cache is not the machine's")
        self.assertEqual(lines[4], "no-hostname")
        self.assertLessEqual(set(lines[5].split()), {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group",
                                                     "nsswitch.conf"})
        machine = set(Path("/etc/passwd").read_text(encoding="utf-8", errors="replace").splitlines())
        shown = lines[6:]
        self.assertTrue(shown and not machine & set(shown), shown)
        self.assertIn(f"sandbox:x:{self.user.uid}:{self.user.gid}:", "\n".join(shown))
        if Path("/etc/hostname").is_file():   # the control: the machine's /etc has it
            self.assertNotIn("no-hostname", self.sh("cat /etc/hostname 2>/dev/null || echo no-hostname").stdout)

    def test_a_compile_sees_the_toolkit_the_compiler_and_its_own_files_alone(self):
        toolchain = _real_toolchain(self)
        source, scratch = self.tmp / "lab.cu", self.folder("scratch")
        source.write_text("\n")
        toolkit = toolchain._toolkit()
        view = toolchain._compile_view(source, scratch, ())
        script = ("for d in / /usr /usr/local /etc; do ls -A $d 2>/dev/null | tr '\\n' ' '; echo; done; "
                  "for f in /etc/passwd /etc/group /etc/hostname /etc/hosts /opt /sys /usr/share /home /root /var /srv "
                  "/usr/local/bin /usr/local/include /usr/sbin; do [ -e $f ] && echo $f; done; echo end; "
                  f"{toolchain._nvcc()} --version >/dev/null && echo nvcc-runs")
        lines = self.sh(script, view).stdout.splitlines()
        top, usr, local, etc = (set(line.split()) for line in lines[:4])
        own = {path.parts[1] for path in (source, scratch, toolkit)}
        self.assertLessEqual(top, {"bin", "lib", "lib64", "usr", "etc", "dev", "proc", "tmp", "run"} | own, lines)
        under_usr = {toolkit.parts[2]} if toolkit.is_relative_to("/usr") else set()
        self.assertLessEqual(usr, {"bin", "lib", "lib64", "libexec", "include"} | under_usr, lines)
        self.assertLessEqual(local, {toolkit.parts[3]} if toolkit.is_relative_to("/usr/local") else set(), lines)
        self.assertLessEqual(etc, {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives"}, lines)
        self.assertEqual(lines[4:], ["end", "nvcc-runs"], "none of the machine's files, and the toolkit's nvcc runs")

    def test_a_run_of_student_code_sees_no_header_to_compile_a_library_with(self):
        toolchain = _real_toolchain(self)
        source = self.tmp / "library.cu"
        source.write_text("#include <cub/version.cuh>\n#include <stdio.h>\nint main() { return CUB_VERSION > 0; }\n")
        argv = [toolchain._nvcc(), "-E", "-x", "cu", str(source), "-o", "/dev/null"]
        control = self.run_in(argv, toolchain._compile_view(source, self.folder("scratch"), ()), timeout=120)
        self.assertEqual(control.returncode, 0, "the control (a compile's view) should preprocess it: "
                         + control.stderr[-500:])
        run = self.run_in(argv, toolchain._run_view((source,), gpu=False), timeout=120)
        self.assertNotEqual(run.returncode, 0, "a run of student code could compile CUB")
        self.assertIn("No such file", run.stderr)


# Forks until fork fails (the subshell then dies: dash gives up at once), keeps what it started, says so.
FORK_BOMB = "(while :; do sleep 100 & done) 2>/dev/null; echo full; exec sleep 100"


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
