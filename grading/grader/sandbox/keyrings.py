"""The kernel keyring, from the grader's side: every run starts in a session keyring of its own.

Keys are not namespaced. A process possesses every key its session keyring holds, whatever its uid,
and a child inherits its parent's session keyring: bubblewrap and setpriv keep it, so every run
possessed the keys of the grader's session (a login's, a container's) and could read them into its
report. Sandbox.preexec() therefore joins a new, empty session keyring in the child before
bubblewrap starts (the keyring goes when the run's last process ends). The seccomp filter refuses
the keyring calls altogether (seccomp_filter.py); this is the fence that holds where there is no
filter. The tests and the attack class's grading use add_key() to put a key where the grader holds it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4
KEYCTL_JOIN_SESSION_KEYRING = 1
# (add_key, keyctl) by machine: the C library has no wrapper (libkeyutils has, and is not always there).
_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219), "ppc64le": (269, 271)}
_NUMBERS = _CALLS.get(platform.machine())
_libc = ctypes.CDLL(None, use_errno=True)
# keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL), made up front: a preexec_fn should do as little as it can.
_JOIN = (ctypes.c_long(_NUMBERS[1]), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(None)) if _NUMBERS \
    else None


def join_new_session_keyring() -> bool:
    """This process's session keyring becomes a new, empty one (its children's too). False where the
    kernel refuses (no keyring support, or an outer seccomp filter such as a container's): then there
    is no keyring to share either. Safe in a preexec_fn: one system call, no exception."""
    return _JOIN is not None and _libc.syscall(*_JOIN) >= 0


def add_key(description: str, payload: bytes, keyring: int = KEY_SPEC_SESSION_KEYRING) -> int:
    """A "user" key with `payload` in `keyring` (the session keyring by default), with the kernel's
    default permissions (its possessor may do anything, its owner may view it); its serial number."""
    if _NUMBERS is None:
        raise OSError(errno.ENOSYS, f"no keyring call numbers for {platform.machine()}")
    serial = _libc.syscall(ctypes.c_long(_NUMBERS[0]), ctypes.c_char_p(b"user"),
                           ctypes.c_char_p(description.encode()), ctypes.c_char_p(payload),
                           ctypes.c_size_t(len(payload)), ctypes.c_long(keyring))
    if serial < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"add_key({description!r}): {os.strerror(error)}")
    return serial
