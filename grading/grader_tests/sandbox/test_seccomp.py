"""The seccomp filter around every sandboxed run (seccomp_filter.py) and the session keyring of its own
(keyrings.py): the program libseccomp exports, read by a small BPF interpreter here (no root needed),
the command line, and real runs under bubblewrap where this machine is root and has it and a C++
compiler (a probe, fixtures/seccomp_probe.cpp, tries the refused calls)."""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import os
import platform
import re
import secrets
import shutil
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader_tests.helpers import FIXTURES, REPO
from grader.sandbox import keyrings
from grader.manifest import Lab, Manifest
from grader.sandbox.run_users import RunUser
from grader.sandbox.bubblewrap import Limits, Sandbox, View
from grader.sandbox.seccomp_filter import (BY_ARGUMENTS, KEPT, REFUSED, SeccompFilter, build, personality_masks,
                                           refused_names)
from grader.stages.toolchain import Toolchain

ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
AUDIT_ARCH_I386 = 0x40000003
DOCKER_PERSONALITIES = {0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF}
PROBE = FIXTURES / "seccomp_probe.cpp"


def _libseccomp():
    try:
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError as exc:
        raise unittest.SkipTest(f"no libseccomp.so.2 here: {exc}")
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    return lib


def run_bpf(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the classic BPF `program` answers for a call (seccomp_data: nr, arch, ip, args[6]; little-endian):
    the loads, jumps, AND and returns libseccomp emits; anything else fails the test."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("<HBBI", program, pc * 8)
        pc += 1
        if code == 0x20:                       # BPF_LD | BPF_W | BPF_ABS
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:                     # BPF_ALU | BPF_AND | BPF_K
            accumulator &= k
        elif code == 0x05:                     # BPF_JMP | BPF_JA
            pc += k
        elif code in (0x15, 0x25, 0x35, 0x45):  # JEQ, JGT, JGE, JSET with K
            taken = {0x15: accumulator == k, 0x25: accumulator > k, 0x35: accumulator >= k,
                     0x45: bool(accumulator & k)}[code]
            pc += jt if taken else jf
        elif code == 0x06:                     # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"BPF opcode {code:#x} at {pc - 1} is not interpreted here")


class TestTheProgram(unittest.TestCase):
    """The program libseccomp exports for this machine, read instruction by instruction."""

    @classmethod
    def setUpClass(cls):
        lib = _libseccomp()
        cls.filter = build()
        if not cls.filter.on:
            raise unittest.SkipTest(f"no filter built here: {cls.filter.why_off}")
        cls.arch = lib.seccomp_arch_native()
        cls.number = staticmethod(lambda name: lib.seccomp_syscall_resolve_name(name.encode()))

    def answer(self, name: str, *args: int) -> int:
        number = self.number(name)
        self.assertGreaterEqual(number, 0, f"{name} has no number on this ABI")
        return run_bpf(self.filter.program, number, self.arch, args)

    def test_every_refused_call_resolves_on_this_abi(self):
        self.assertTrue(self.filter.program and len(self.filter.program) % 8 == 0)
        self.assertLessEqual({"add_key", "keyctl", "request_key", "bpf", "userfaultfd", "unshare", "clone3"},
                             set(self.filter.refused))
        if platform.machine() == "x86_64":   # every name of the list is an x86_64 call
            self.assertEqual(self.filter.absent, ())
            self.assertEqual(set(self.filter.refused), set(refused_names()))

    def test_refused_calls_get_eperm_and_clone3_enosys(self):
        for name in self.filter.refused:
            self.assertEqual(self.answer(name), ENOSYS if name == "clone3" else EPERM, name)

    def test_what_lab_programs_setpriv_and_cuda_need_is_allowed(self):
        for name in ("read", "write", "openat", "mmap", "ioctl", "futex", "getpid", "execve", "wait4", "socket",
                     "ptrace", "process_vm_readv", "mbind", "set_mempolicy", "setresuid", "setgroups", "capset",
                     "prctl", "seccomp", "memfd_create", "personality", "clone"):
            self.assertEqual(self.answer(name), ALLOW, name)
        self.assertEqual(self.answer("clone", 0x003D0F00), ALLOW, "a thread's clone flags")   # glibc's pthread_create
        self.assertEqual(self.answer("socket", 1), ALLOW, "AF_UNIX")

    def test_calls_refused_by_their_arguments(self):
        for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
            self.assertEqual(self.answer("clone", flag | 17), EPERM, f"clone with namespace flag {flag:#x}")
        self.assertEqual(self.answer("socket", 40), EPERM, "AF_VSOCK")
        for value in sorted(DOCKER_PERSONALITIES) + [0x1_0000_0000]:   # the kernel reads an unsigned int
            self.assertEqual(self.answer("personality", value), ALLOW, hex(value))
        for value in (0x0040000, 0x0400000, 0x0100000, 0x80040000, 0x7FFFFFFF, 0xFFFFFFFE, 0x1, 0x20009):
            self.assertEqual(self.answer("personality", value), EPERM, hex(value))

    def test_another_abi_cannot_go_round_the_list(self):
        self.assertEqual(run_bpf(self.filter.program, 20, AUDIT_ARCH_I386), EPERM, "an i386 call (int 0x80)")
        if platform.machine() == "x86_64":
            self.assertEqual(run_bpf(self.filter.program, 0x40000000 | 39, self.arch), EPERM, "an x32 call")

    def test_personality_masks_refuse_every_value_but_dockers(self):
        masks = personality_masks()
        values = set(DOCKER_PERSONALITIES) | {1 << bit for bit in range(32)}
        values |= {0xFFFFFFFF ^ (1 << bit) for bit in range(32)}
        values |= {secrets.randbits(32) for _ in range(2000)} | {0x20008 | (1 << bit) for bit in range(32)}
        for value in values:
            refused = any(value & mask == want for mask, want in masks)
            self.assertEqual(refused, value not in DOCKER_PERSONALITIES, hex(value))

    def test_kept_calls_are_not_refused(self):
        kept = {name for names, _ in KEPT for name in names}
        self.assertFalse(kept & set(refused_names()), "a call both kept and refused")

    def test_the_security_page_lists_every_refused_call(self):
        text = (REPO / "docs" / "grading-security.md").read_text(encoding="utf-8")
        section = text.split("#### The seccomp filter", 1)[-1].split("\n#", 1)[0]
        listed = set(re.findall(r"`([a-z_0-9]+)`", "\n".join(line.split("|")[1] for line in section.splitlines()
                                                               if line.startswith("| ") and "|" in line[2:])))
        wanted = set(refused_names()) | {name for name, _ in BY_ARGUMENTS} | {n for names, _ in KEPT for n in names}
        self.assertEqual(listed, wanted, "docs/grading-security.md's seccomp table and seccomp_filter.py differ")


class TestTheCommandLine(unittest.TestCase):
    FILTER = SeccompFilter(b"\x06\x00\x00\x00\x00\x00\xff\x7f", ("keyctl",), ("clone",), (), "")

    def test_a_run_gets_the_filter_on_its_descriptor_and_never_starts_without_it(self):
        sandbox = Sandbox(enabled=True, seccomp=self.FILTER)
        user = RunUser(65123, 65123)
        command = sandbox.command(["true"], View(), user, (7,))
        self.assertEqual(command[command.index("--seccomp"):command.index("--seccomp") + 2], ["--seccomp", "7"])
        self.assertLess(command.index("--seccomp"), command.index("--"), "an option of bwrap, not of setpriv")
        with self.assertRaises(ValueError):
            sandbox.command(["true"], View(), user)
        off = Sandbox(enabled=True, seccomp=SeccompFilter(why_off="test"))
        self.assertNotIn("--seccomp", off.command(["true"], View(), user))
        with self.assertRaises(ValueError):
            off.command(["true"], View(), user, (7,))

    def test_each_run_reads_the_whole_program_from_its_own_descriptor(self):
        with self.FILTER.descriptors() as first, self.FILTER.descriptors() as second:
            self.assertEqual(len(first), 1)
            self.assertNotEqual(first, second)
            self.assertEqual(os.read(first[0], 64), self.FILTER.program)
            self.assertEqual(os.read(second[0], 64), self.FILTER.program, "a second run reads it from the start")
            self.assertFalse(os.get_inheritable(first[0]), "only a run given it in pass_fds may inherit it")
        with self.assertRaises(OSError):
            os.fstat(first[0])
        with SeccompFilter().descriptors() as none, Sandbox(enabled=False, seccomp=self.FILTER).seccomp_fds() as off:
            self.assertEqual((none, off), ((), ()))

    def test_the_inputs_line_says_whether_the_filter_is_on_and_why_not(self):
        on = Sandbox(enabled=True, version="bubblewrap 0.8.0", seccomp=self.FILTER)
        self.assertIn("seccomp: 1 calls refused (1 more by their arguments)", on.describe())
        off = Sandbox(enabled=True, version="bubblewrap 0.8.0",
                      seccomp=SeccompFilter(why_off="libseccomp.so.2 not found"))
        self.assertIn("no seccomp filter (libseccomp.so.2 not found)", off.describe())
        self.assertFalse(off.describe().startswith("UNSANDBOXED"), "--require-sandbox still accepts the sandbox")

    def test_without_libseccomp_the_filter_is_off_and_says_why(self):
        with mock.patch("ctypes.CDLL", side_effect=OSError("libseccomp.so.2: cannot open shared object file")):
            seccomp = build()
        self.assertFalse(seccomp.on)
        self.assertIn("libseccomp.so.2 not found", seccomp.describe())
        with mock.patch("grader.sandbox.seccomp_filter._build", side_effect=OSError("broken")):
            self.assertIn("libseccomp could not build it: broken", build().describe())


class TestFilteredRuns(unittest.TestCase):
    """Real runs under bubblewrap and the filter; skipped where this machine cannot sandbox."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")
        if not cls.sandbox.seccomp.on:
            raise AssertionError(f"root with bubblewrap, but no filter: {cls.sandbox.seccomp.why_off}")
        compiler = shutil.which("c++") or shutil.which("g++")
        if compiler is None:
            raise unittest.SkipTest("no C++ compiler here to build the probe")
        cls.folder = Path(tempfile.mkdtemp(prefix="seccomp-probe-"))
        cls.folder.chmod(0o755)
        cls.probe = cls.folder / "seccomp_probe"
        subprocess.run([compiler, "-O1", "-pthread", "-o", str(cls.probe), str(PROBE)], check=True, timeout=120)
        cls.unfiltered = dataclasses.replace(cls.sandbox, seccomp=SeccompFilter(why_off="the test's control"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)

    def probe_run(self, *args: str, sandbox: Sandbox | None = None, preexec: bool = True) -> str:
        """The probe in a run of student code's view; what it printed. preexec=False: without the
        sandbox's preexec (the control: no session keyring of its own)."""
        sandbox = sandbox or self.sandbox
        view = View(read_only=(self.probe,), etc="minimal")
        with sandbox.run_user() as user, sandbox.seccomp_fds() as fds:
            result = subprocess.run(sandbox.command([str(self.probe), *args], view, user, fds), pass_fds=fds,
                                    env=sandbox.environment(os.environ), capture_output=True, text=True, timeout=60,
                                    preexec_fn=sandbox.preexec(Limits()) if preexec else None)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result.stdout

    def test_refused_calls_fail_with_eperm_and_the_rest_works(self):
        answers = dict(line.split(" ", 1) for line in self.probe_run("calls").splitlines())
        wanted = {"add_key": "EPERM", "keyctl": "EPERM", "request_key": "EPERM", "unshare": "EPERM",
                  "clone_newuser": "EPERM", "clone3": "ENOSYS", "userfaultfd": "EPERM", "io_uring_setup": "EPERM",
                  "socket_vsock": "EPERM", "socket_unix": "ok", "personality_query": "ok", "personality_linux": "ok",
                  "personality_no_randomize": "EPERM", "personality_high_bit": "EPERM", "getpid": "ok"}
        if platform.machine() == "x86_64":
            wanted |= {"i386_getpid": "EPERM", "x32_getpid": "EPERM"}
        self.assertEqual({name: answers.get(name) for name in wanted}, wanted)
        control = dict(line.split(" ", 1) for line in self.probe_run("calls", sandbox=self.unfiltered).splitlines())
        self.assertEqual((control["keyctl"], control["clone3"]), ("ok", "EINVAL"), "without the filter (control)")

    def test_a_run_cannot_read_the_graders_session_keyring(self):
        if not keyrings.join_new_session_keyring():
            self.skipTest("this kernel (or a filter around this test) refuses the keyring calls")
        secret = f"grader-key-{secrets.token_hex(8)}"
        keyrings.add_key("reduction-labs-test-grader-key", secret.encode())
        control = self.probe_run("session", sandbox=self.unfiltered, preexec=False)
        self.assertIn(f"found {secret}", control, "the control: a run that inherits the grader's session keyring")
        self.assertNotIn(secret, self.probe_run("session", sandbox=self.unfiltered), "a session keyring of its own")
        for preexec in (True, False):   # the filter alone, and with the session keyring of its own
            self.assertEqual(self.probe_run("session", preexec=preexec), "session EPERM\n")

    def test_two_runs_cannot_pass_a_key(self):
        name, value = f"reduction-labs-test-{secrets.token_hex(4)}", secrets.token_hex(8)
        self.assertEqual(self.probe_run("publish", name, value), "publish EPERM\npublish EPERM\n")
        self.assertEqual(self.probe_run("find", name), "none\n")
        # The control: without the filter, one run's key (every uid may read it) reaches another uid's run.
        self.assertEqual(self.probe_run("publish", name, value, sandbox=self.unfiltered), "publish ok\npublish ok\n")
        self.assertEqual(self.probe_run("find", name, sandbox=self.unfiltered), f"found {value}\n")
        self.assertEqual(self.probe_run("find", name), "none\n", "a filtered run cannot read it either")

    def test_honest_programs_still_work(self):
        self.assertIn("seccomp: ", self.sandbox.describe())   # detect()'s self-test (id -u) passed under it
        self.assertEqual(self.probe_run("honest"), "honest ok\n")

    def test_a_filter_that_breaks_the_runs_is_turned_off_and_says_why(self):
        kill_all = SeccompFilter(b"\x06\x00\x00\x00\x00\x00\x00\x00", ("everything",), (), (), "")  # RET KILL
        sandbox = self.unfiltered.with_seccomp(kill_all)
        self.assertTrue(sandbox.enabled)
        self.assertIn("no seccomp filter (bwrap --seccomp failed its self-test:", sandbox.describe())

    def test_nvcc_compiles_under_the_filter(self):
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not Path(nvcc).is_file():
            self.skipTest("no nvcc here")
        lab = Lab("02_atomic", "atomic.cu", "lab02_atomic")
        manifest = Manifest(REPO, REPO / "build", None, nvcc, ["-std=c++17", "-shared", "-Xcompiler=-fPIC"], [], [])
        source, module = self.folder / "src" / lab.file, self.folder / "modules" / lab.module_file
        for folder in (source.parent, module.parent):
            folder.mkdir(exist_ok=True)
            folder.chmod(0o755)
        source.write_text("__global__ void kernel(int* out) { atomicAdd(out, 1); }\n", encoding="utf-8")
        source.chmod(0o644)
        run = Toolchain(manifest, self.sandbox, Limits()).compile("student", lab, source, module, 300)
        self.assertEqual(run.process.returncode, 0, run.process.stderr[-2000:])
        self.assertTrue(module.is_file())
        self.assertIn("--seccomp", run.process.command)


if __name__ == "__main__":
    unittest.main()
