"""The seccomp filter around every sandboxed run: the system calls no lab needs, refused with EPERM.

The sandbox's namespaces do not cover the kernel keyring: a run published lab 01's sums as a key
every uid could read, and a classmate's run returned them without summing; and every run inherited
the grader's session keyring, so a key the grader held ended up in a report. Nor do they cover the
kernel interfaces an unprivileged process still reaches (bpf, userfaultfd, io_uring, user
namespaces, ...). This filter refuses those calls, and those that need a capability the run never
has, as Docker's and podman's default profiles do for a container.

It is a list of refusals over a default of "allowed", not a list of what is allowed: the CUDA
driver, nvcc, ptxas, compute-sanitizer (which injects into its target) and setpriv (which runs
under the filter, as root, before it drops to the run's uid) must keep working, and nothing short
of a GPU says which calls they make. What is refused is what containers refuse by default, where
CUDA and compute-sanitizer are known to run. A refused call fails with EPERM (clone3 with ENOSYS,
so that the C library falls back to clone), never kills: the student sees an error, not a crash.

The program is built once per grading with libseccomp itself (its runtime library, libseccomp.so.2,
through ctypes: apt depends on it, so every Debian and Ubuntu has it; no compiler or -dev package),
exported as classic BPF and handed to each bubblewrap on a descriptor of its own (--seccomp FD);
bubblewrap loads it last, just before it runs setpriv. Calls of another ABI than the machine's (32-bit
int 0x80, x32 on x86_64) are refused outright, so no other numbering gets round the list.
docs/grading-security.md has the table of what is refused and why.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass

# Refused whatever their arguments, with why (docs/grading-security.md has this table).
REFUSED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("add_key", "keyctl", "request_key"),
     "the kernel keyring is not namespaced: a key outlives its run and reaches other runs and uids, and every "
     "run inherited the grader's session keyring"),
    (("bpf", "perf_event_open", "userfaultfd"),
     "kernel interfaces an unprivileged process may reach (by sysctl), with a record of kernel exploits"),
    (("io_uring_setup", "io_uring_enter", "io_uring_register"),
     "a second way into most system calls, past this filter, and a record of kernel exploits"),
    (("unshare", "setns"),
     "namespaces: a user namespace makes the run root of its own, with mounts and capabilities there"),
    (("mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
      "fspick", "mount_setattr"),
     "the mount table: bubblewrap has built the run's view before the filter is loaded"),
    (("name_to_handle_at", "open_by_handle_at"),
     "a file by its handle, round the mounts (the container escape known as shocker)"),
    (("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
      "query_module", "get_kernel_syms"),
     "kernel code: capabilities a run never has"),
    (("reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "sethostname", "setdomainname",
      "vhangup", "iopl", "ioperm", "lookup_dcookie", "fanotify_init", "nfsservctl", "_sysctl", "uselib",
      "ustat", "sysfs"),
     "administration and obsolete calls: capabilities a run never has, or nothing a program uses"),
    (("syslog",), "the kernel's log (where dmesg_restrict is 0), with what other processes logged"),
    (("settimeofday", "clock_settime", "clock_adjtime", "adjtimex"), "the machine's clock, which every timing reads"),
    (("kcmp", "pidfd_getfd", "process_madvise"),
     "reach into another process; Docker refuses them too, and compute-sanitizer runs there"),
)
CLONE3_ERRNO = errno.ENOSYS   # its flags are in memory, where a filter cannot read them; libc then uses clone
# Refused for some arguments only (the rules are in _conditional_rules()).
BY_ARGUMENTS: tuple[tuple[str, str], ...] = (
    ("clone", "with a namespace flag (CLONE_NEWUSER, CLONE_NEWNS, ...): as unshare"),
    ("socket", "of family AF_VSOCK: not in the run's network namespace; it reaches a virtual machine's host"),
    ("personality", "but Docker's values (PER_LINUX, PER_LINUX32, UNAME26, and the query 0xffffffff): no "
                    "READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE and the like"),
)
# Kept on purpose, though some container profiles refuse them (a unit test keeps them off the lists above).
KEPT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("ptrace", "process_vm_readv", "process_vm_writev"),
     "compute-sanitizer injects into its target and may trace it; they reach only the run's own processes "
     "(its uid, its PID namespace), and Docker allows them"),
    (("get_mempolicy", "mbind", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages", "move_pages"),
     "the CUDA driver may place pinned host memory by NUMA node; they act on the run's own memory"),
    (("setresuid", "setresgid", "setgroups", "capset", "capget", "prctl", "execve"),
     "setpriv runs under the filter, as root, and drops to the run's uid with them"),
    (("clone", "fork", "vfork", "socket", "membarrier", "vmsplice", "seccomp"),
     "threads and processes; compute-sanitizer talks to its target over loopback; a run may narrow its own "
     "filter, never widen it"),
)

NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
AF_VSOCK = 40
# personality(): Docker allows 0, PER_LINUX32 (0x8), UNAME26 (0x20000), both, and the query 0xffffffff.
PERSONALITY_BITS = (3, 17)
PERSONALITY_QUERY = 0xFFFFFFFF

# libseccomp's ABI (seccomp.h, stable since 2.0)
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_FLTATR_ACT_BADARCH = 2
SCMP_FLTATR_CTL_OPTIMIZE = 8       # 2: a binary tree of the calls (libseccomp 2.5), not a linear list
SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ = 4, 7
LIBRARY = "libseccomp.so.2"


def scmp_act_errno(value: int) -> int:
    return 0x00050000 | (value & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    """struct scmp_arg_cmp: (argument index, operator, datum a, datum b); MASKED_EQ is (arg & a) == b."""
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def refused_names() -> tuple[str, ...]:
    return tuple(name for names, _ in REFUSED for name in names) + ("clone3",)


def personality_masks() -> list[tuple[int, int]]:
    """(mask, value) patterns of personality()'s argument (its low 32 bits: the kernel's unsigned int)
    that are refused: every value but Docker's. libseccomp allows one comparison per argument in a rule,
    so "not one of five values" is a union of masked patterns: a bit outside PER_LINUX32 and UNAME26
    is set, and either of those two is clear, or (both set) some other bit is clear, which a set bit
    followed by a clear one in a cyclic order of the other bits finds. 90 rules."""
    keep = [1 << bit for bit in PERSONALITY_BITS]
    both = sum(keep)
    others = [1 << bit for bit in range(32) if bit not in PERSONALITY_BITS]
    patterns = []
    for index, bit in enumerate(others):
        following = others[(index + 1) % len(others)]
        patterns += [(bit | keep[0], bit), (bit | keep[1], bit), (bit | following | both, bit | both)]
    return patterns


@dataclass(frozen=True)
class SeccompFilter:
    program: bytes = b""                 # classic BPF (struct sock_filter[]) for bwrap --seccomp; b"": no filter
    refused: tuple[str, ...] = ()        # calls refused whatever their arguments (on this machine's ABI)
    by_arguments: tuple[str, ...] = ()   # calls refused for some arguments
    absent: tuple[str, ...] = ()         # calls of the list this ABI does not have (nothing to refuse)
    why_off: str = "not built"           # why there is no program

    @property
    def on(self) -> bool:
        return bool(self.program)

    def describe(self) -> str:
        if not self.on:
            return f"no seccomp filter ({self.why_off})"
        return f"seccomp: {len(self.refused)} calls refused ({len(self.by_arguments)} more by their arguments)"

    @contextlib.contextmanager
    def descriptors(self) -> Iterator[tuple[int, ...]]:
        """The program on a descriptor of its own for one run (bwrap reads it to its end, so no two runs
        share one), closed after the `with` block: () without a filter. Close-on-exec: only a run that
        gets it in pass_fds inherits it."""
        if not self.on:
            yield ()
            return
        fd = os.memfd_create("reduction-seccomp", os.MFD_CLOEXEC)
        try:
            view = memoryview(self.program)
            while view:
                view = view[os.write(fd, view):]
            os.lseek(fd, 0, os.SEEK_SET)
            yield (fd,)
        finally:
            os.close(fd)


class _Failed(Exception):
    pass


def build() -> SeccompFilter:
    """The filter of this machine's native ABI, or one that is off and says why (never raises)."""
    try:
        lib = ctypes.CDLL(LIBRARY, use_errno=True)
    except OSError as exc:
        return SeccompFilter(why_off=f"{LIBRARY} not found: {exc} (install libseccomp2)")
    try:
        _declare(lib)
        return _build(lib)
    except (_Failed, AttributeError, OSError) as exc:
        return SeccompFilter(why_off=f"libseccomp could not build it: {exc}")


def _declare(lib) -> None:
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]


def _check(rc: int, what: str) -> None:
    if rc < 0:
        raise _Failed(f"{what}: {os.strerror(-rc)}")


def _build(lib) -> SeccompFilter:
    context = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not context:
        raise _Failed("seccomp_init failed")
    try:
        eperm = scmp_act_errno(errno.EPERM)
        # Another ABI's numbers would get round the list: its calls are all refused.
        _check(lib.seccomp_attr_set(context, SCMP_FLTATR_ACT_BADARCH, eperm), "seccomp_attr_set(badarch)")
        lib.seccomp_attr_set(context, SCMP_FLTATR_CTL_OPTIMIZE, 2)   # libseccomp < 2.5: a linear list, as good

        def add(name: str, action: int, *compare: tuple[int, int, int, int]) -> bool:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:   # -1: unknown to this libseccomp; below: a call this ABI does not have
                return False
            array = (_ArgCmp * len(compare))(*(_ArgCmp(*c) for c in compare)) if compare else None
            _check(lib.seccomp_rule_add_array(context, action, number, len(compare), array), f"rule for {name}")
            return True

        names = [name for names, _ in REFUSED for name in names]
        refused = [name for name in names if add(name, eperm)]
        if add("clone3", scmp_act_errno(CLONE3_ERRNO)):
            refused.append("clone3")
        for flag in NAMESPACE_FLAGS:   # clone's flags: its first argument on every ABI CUDA runs on
            add("clone", eperm, (0, SCMP_CMP_MASKED_EQ, flag, flag))
        add("socket", eperm, (0, SCMP_CMP_EQ, AF_VSOCK, 0))
        for mask, value in personality_masks():
            add("personality", eperm, (0, SCMP_CMP_MASKED_EQ, mask, value))
        program = _export(lib, context)
    finally:
        lib.seccomp_release(context)
    if not program or len(program) % 8:
        raise _Failed(f"seccomp_export_bpf wrote {len(program)} bytes, not whole instructions")
    absent = tuple(name for name in (*names, "clone3") if name not in refused)
    return SeccompFilter(program, tuple(refused), tuple(name for name, _ in BY_ARGUMENTS), absent, "")


def _export(lib, context) -> bytes:
    fd = os.memfd_create("reduction-seccomp-export", os.MFD_CLOEXEC)
    try:
        _check(lib.seccomp_export_bpf(context, fd), "seccomp_export_bpf")
        size = os.lseek(fd, 0, os.SEEK_END)
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)
