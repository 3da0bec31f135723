"""The CUDA libraries no sandboxed process may load: found once per grading, masked in every sandbox.

A lab's module is the student's own kernels on the CUDA runtime. The sandbox binds the system folders
read-only, and with them every library installed there: a lab 10 that dlopen()ed cuBLAS from the
toolkit passed with full points. So every file of these libraries under the folders a sandbox binds
(the toolkit's lib64 and targets/, /usr/lib/x86_64-linux-gnu, Python's site-packages such as
nvidia/cublas/lib, /opt) is covered by /dev/null: opening it fails. What stays: the CUDA runtime
(libcudart; modules are built with --cudart=shared), the driver (libcuda, libnvidia-*, its PTX JIT),
and the tools' own libraries (compute-sanitizer, CUPTI, NVTX). Compiles are masked too: nvcc needs
none of these, and a compile could otherwise `.incbin` a library into the module.

The files are found by name (a walk of the bound folders, symbolic links resolved to the file they
name), so a copy under another name is not found; docs/grading-security.md says what remains.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

# File-name patterns (shared objects, their version links and static archives alike) and why.
DENIED_LIBRARIES = (
    "libcublas*",     # cuBLAS, cuBLASLt: dot, asum, GEMV with a vector of ones are reductions
    "libnvblas*",     # NVBLAS: the BLAS interface routed onto cuBLAS
    "libcufft*",      # cuFFT, cuFFTW: the zero-frequency term of an FFT is the sum
    "libcurand*",     # cuRAND: no lab needs it; no library a lab does not need is in reach
    "libcusparse*",   # cuSPARSE, cuSPARSELt: SpMV with a row of ones is a reduction
    "libcusolver*",   # cuSOLVER (and cuSOLVERMg): built on cuBLAS
    "libnpp*",        # NPP: nppsSum and the other statistics functions are reductions
    "libnvjpeg*",     # nvJPEG: no lab needs it
    "libcudnn*",      # cuDNN: reduce-tensor operations
    "libcutensor*",   # cuTENSOR: tensor reductions
    "libnccl*",       # NCCL: reduce and all-reduce collectives
    "libnvrtc*",      # NVRTC: compiles CUDA C++ at run time, CUB and Thrust included
    "libnvJitLink*",  # nvJitLink: links device code at run time, the other half of a run-time compiler
    "libnvvm*",       # NVVM: compiles NVVM IR at run time (nvcc's cicc does not load it)
    "libcufile*",     # cuFile (GPUDirect Storage): no lab needs it
)
# Walked for them: the system folders a sandbox binds, but /etc (no libraries) and /sys (no files).
SKIPPED_FOLDERS = ("/etc", "/sys")


# The patterns as one expression: a grading's walk meets some 170,000 file names, and fifteen
# fnmatchcase() calls a name took 6 of the walk's 8 s on a 2-core VM (2026-11-28), before the first student.
_DENIED = re.compile("|".join(fnmatch.translate(pattern) for pattern in DENIED_LIBRARIES))


def is_denied(name: str) -> bool:
    return _DENIED.match(name) is not None


def _roots(folders: Iterable[str | os.PathLike]) -> list[Path]:
    """The existing folders, resolved, without those inside another one."""
    resolved = sorted({Path(folder).resolve() for folder in folders if Path(folder).is_dir()},
                      key=lambda path: len(path.parts))
    roots: list[Path] = []
    for path in resolved:
        if not any(path == root or root in path.parents for root in roots):
            roots.append(path)
    return roots


@functools.cache
def denied_library_files(folders: tuple[str, ...]) -> tuple[Path, ...]:
    """Every real file (symbolic links resolved) under `folders` that a denied name leads to: a file
    with such a name, or the file a link with such a name points at. Once a process per set of folders."""
    found: set[Path] = set()
    for root in _roots(folder for folder in folders if folder not in SKIPPED_FOLDERS):
        for folder, _, files in os.walk(root):   # links to folders are not followed: their target is walked
            for name in files:
                if is_denied(name):
                    real = Path(folder, name).resolve()
                    if real.is_file():
                        found.add(real)
    return tuple(sorted(found))
