"""Where a graded compile would find the CUDA C++ Core Libraries (CUB, Thrust, libcu++), so that the
sandbox can hide every copy, not just the one a toolkit of our own layout keeps in include/cccl.

A machine may hold more than one copy: the toolkit's include/cccl, a distribution's /usr/include/cub
and /usr/include/thrust, a CCCL checkout on CPATH. Guessing their places is how a copy gets missed
(a CI machine once compiled a student's cub::DeviceReduce::Sum that our own machine refused). So the
compiler says: nvcc -M on a probe that includes one header of each library where __has_include
finds it, run in the same sandbox view as a graded compile, lists the headers it found; their
library folders are hidden and the probe runs again, until it finds none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

PROBE = """\
#if __has_include(<cub/version.cuh>)
#include <cub/version.cuh>
#endif
#if __has_include(<thrust/version.h>)
#include <thrust/version.h>
#endif
#if __has_include(<cuda/std/version>)
#include <cuda/std/version>
#endif
#if __has_include(<cuda/version>)
#include <cuda/version>
#endif
"""
# A library's top folder, known by what it holds: a toolkit may itself live in a folder named cuda
# (/opt/cuda/include/cuda_runtime.h), and that one must stay visible.
LIBRARY_MARKS = {"cub": "version.cuh", "thrust": "version.h", "cuda": "std"}
MAX_ROUNDS = 6


def _library_top(folder: Path) -> bool:
    mark = LIBRARY_MARKS.get(folder.name)
    return mark is not None and (folder / mark).exists()


def library_folders(dependencies: str) -> set[Path]:
    """The library folders of the headers an `nvcc -M` run listed: the nearest enclosing cub/, thrust/
    or cuda/std's cuda/ folder of each (its parent instead when that is include/cccl, which holds all three)."""
    found = set()
    for token in dependencies.replace("\\\n", " ").split():
        path = Path(token)
        if not path.is_absolute() or token.endswith(":"):
            continue
        parts = path.parts
        for index in range(len(parts) - 2, 0, -1):   # the deepest folder that is a library's top folder
            folder = Path(*parts[:index + 1])
            if _library_top(folder):
                found.add(folder.parent if folder.parent.name == "cccl" else folder)
                break
    return found


def hidden_library_folders(probe: Callable[[tuple[Path, ...]], str], known: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """Every library folder the compiler finds. `probe(hidden)` runs `nvcc -M` on PROBE with `hidden`
    masked and returns its output (an empty string when it could not run). Raises RuntimeError when
    the folders cannot all be hidden."""
    hidden = tuple(path for path in known if path.exists())
    for _ in range(MAX_ROUNDS):
        found = library_folders(probe(hidden))
        if found & set(hidden):
            raise RuntimeError("the compiler still finds CUB, Thrust or libcu++ in a hidden folder: " +
                               ", ".join(map(str, sorted(found & set(hidden)))))
        if not found:
            return hidden
        hidden += tuple(sorted(found))
    raise RuntimeError("the compiler still finds CUB, Thrust or libcu++ after hiding " +
                       ", ".join(map(str, hidden)))
