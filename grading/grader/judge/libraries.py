"""Library reductions: which headers a lab may not include, how the grader finds them in the include
set the compiler actually used, and where a graded compile would find CUB and Thrust so that the
sandbox can hide them as well.

A lab is the student's own reduction. CUB and Thrust (the CUDA C++ Core Libraries' algorithms) are
refused in every lab, and cooperative groups' collectives (cg::reduce, cg::inclusive_scan) in the
labs whose lesson they skip ([compile] in grading/policy.toml). libcu++ (cuda/std/*, cuda/atomic,
cuda/barrier) is not a reduction and is never refused or hidden: cooperative_groups.h itself needs it.

The rule is by name, from the compiler's own list of the files it opened: `nvcc -MD` in the graded
compile (make syntax; nvcc 13 preprocesses the host pass and one device pass per -gencode target and
lists the union, so a header included only under `#ifdef __CUDA_ARCH__`, or only for sm_90, is
there too). Every listed path is resolved (symbolic links, `..`) and belongs to a library when one
of its folders is that library's top folder, known by the file it holds (cub/version.cuh,
thrust/version.h): `"/usr/local/cuda/include/cccl/thrust/../cub/..."`, an absolute path, a path
through a link and a second copy elsewhere on the machine are all the same library. The header the
student used is named from gcc's include tree (`-Xcompiler=-H`): a refused header that a file of no
refused library included.

Hiding (defense in depth): a machine may hold more than one copy of CUB and Thrust (the toolkit's
include/cccl, a distribution's /usr/include/cub, a CCCL checkout on CPATH). Guessing their places is
how a copy gets missed, so the compiler says: nvcc -M on a probe that includes one header of each
where __has_include finds it, run in the same sandbox view as a graded compile, lists the headers it
found; their library folders are hidden and the probe runs again, until it finds none.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from ..settings import CompileSettings


@dataclass(frozen=True)
class Library:
    """Headers a lab may be refused: those under the deepest folder named `top` that holds `mark`."""
    name: str                       # "CUB"
    top: str                        # the library's top folder's name: <cub/...>
    mark: str                       # a file only the library's top folder holds (a toolkit folder named cuda is not libcu++)
    what: str                       # why, for the verdict: "CUB is a library reduction"
    policy_key: str                 # the [compile] key that lifts or sets the refusal
    headers: tuple[str, ...] = ()   # only these, relative to the top folder (empty: every file of the library)

    def refuses(self, relative: str) -> bool:
        return not self.headers or relative in self.headers


CUB = Library("CUB", "cub", "version.cuh", "CUB is a library reduction", "allow_cccl")
THRUST = Library("Thrust", "thrust", "version.h", "Thrust is a library reduction", "allow_cccl")
# cg::reduce and cg::inclusive_scan (a scan's last lane is the sum) with their implementation files,
# which a student could include directly. cooperative_groups.h itself includes none of them.
CG_COLLECTIVES = Library(
    "cooperative groups' collectives", "cooperative_groups", "details/info.h",
    "cooperative groups' reduce and scan are library reductions", "refuse_cg_collectives",
    ("reduce.h", "scan.h", "details/reduce.h", "details/scan.h", "details/coalesced_reduce.h",
     "details/coalesced_scan.h"))
HIDDEN = (CUB, THRUST)   # what the sandbox hides from a graded compile unless [compile] allow_cccl

PROBE = """\
#if __has_include(<cub/version.cuh>)
#include <cub/version.cuh>
#endif
#if __has_include(<thrust/version.h>)
#include <thrust/version.h>
#endif
"""
MAX_ROUNDS = 6
_TREE_LINE = re.compile(r"^(\.+) (\S.*)$")


# ---- the compiler's listings

def refused_libraries(settings: CompileSettings, lab_number: int) -> tuple[Library, ...]:
    """The library reductions lab `lab_number` may not include: CUB and Thrust unless [compile]
    allow_cccl, cooperative groups' collectives in the labs [compile] refuse_cg_collectives lists."""
    refused = () if settings.allow_cccl else (CUB, THRUST)
    return refused + ((CG_COLLECTIVES,) if lab_number in settings.refuse_cg_collectives else ())


def parse_dependencies(text: str) -> list[str]:
    """The prerequisites of the make rules `nvcc -M` / `-MD` writes, in order, each once. Targets are
    left out; gcc's escapes (`\\ ` for a space, `\\#`, `$$`) are undone."""
    found: dict[str, None] = {}
    for rule in text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines():
        separator = re.search(r"(?<!\\):(?=\s|$)", rule)
        if separator is None:
            continue
        for token in _tokens(rule[separator.end():]):
            found.setdefault(token, None)
    return list(found)


def _tokens(text: str) -> Iterable[str]:
    token, index = "", 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in " #":
            token += text[index + 1]
            index += 2
            continue
        if char == "$" and text[index + 1:index + 2] == "$":
            token += "$"
            index += 2
            continue
        if char.isspace():
            if token:
                yield token
            token = ""
        else:
            token += char
        index += 1
    if token:
        yield token


def parse_include_tree(text: str) -> list[tuple[int, str]]:
    """gcc's `-H` lines ("... /path": depth, path) in order; every other line is left out. Several
    preprocessing passes give several trees, one after the other."""
    tree = []
    for line in text.splitlines():
        match = _TREE_LINE.match(line)
        if match:
            tree.append((len(match.group(1)), match.group(2).strip()))
    return tree


# ---- which library a file belongs to

@functools.lru_cache(maxsize=4096)
def _holds(folder: str, mark: str) -> bool:
    return os.path.isfile(os.path.join(folder, mark))


def library_header(path: str, libraries: Iterable[Library]) -> tuple[Library, str] | None:
    """The library of `libraries` that `path` (as a compiler listed it) belongs to and the header as
    `#include <...>` would name it, or None. The path is resolved first; its deepest folder that is
    one of the libraries' top folders decides; a file of that library that the library does not
    refuse (headers) is None."""
    libraries = tuple(libraries)
    if not path.startswith("/"):
        return None
    real = Path(os.path.realpath(path))
    parts = real.parts
    for index in range(len(parts) - 2, 0, -1):
        folder = Path(*parts[:index + 1])
        for library in libraries:
            if folder.name == library.top and _holds(str(folder), library.mark):
                relative = "/".join(parts[index + 1:])
                return (library, f"{library.top}/{relative}") if library.refuses(relative) else None
    return None


def refused_headers(paths: Iterable[str], libraries: Iterable[Library]) -> list[str]:
    """Every header of `paths` that `libraries` refuse, as <...> would name it, in order, each once."""
    libraries = tuple(libraries)
    found: dict[str, None] = {}
    for path in paths:
        hit = library_header(path, libraries)
        if hit:
            found.setdefault(hit[1], None)
    return list(found)


def used_headers(tree: list[tuple[int, str]], libraries: Iterable[Library]) -> list[str]:
    """The outermost refused headers of an include tree: those that no refused header includes,
    directly or through other files (the student's file, a harness or toolkit header included them).
    What the student used, not what the library includes itself."""
    libraries = tuple(libraries)
    found: dict[str, None] = {}
    inside: list[bool] = []   # inside[d - 1]: the open file at depth d is a refused header or within one
    for depth, path in tree:
        hit = library_header(path, libraries)
        del inside[depth - 1:]
        inside.extend([False] * (depth - 1 - len(inside)))   # a malformed tree: its missing levels count as outside
        within = bool(inside) and inside[-1]
        if hit and not within:
            found.setdefault(hit[1], None)
        inside.append(within or hit is not None)
    return list(found)


def refusal_detail(lab_number: int, headers: list[str], libraries: Iterable[Library]) -> str:
    """The verdict's detail: the headers, why, and the policy keys that decide it."""
    libraries = tuple(libraries)
    used = [library for library in libraries if any(_top(h) == library.top for h in headers)] or list(libraries[:1])
    shown = ", ".join(f"<{header}>" for header in headers[:4]) + (f" and {len(headers) - 4} more" if len(headers) > 4 else "")
    keys = ", ".join(dict.fromkeys(library.policy_key for library in used))
    return (f"uses {shown}: " + "; ".join(dict.fromkeys(library.what for library in used)) +
            f"; lab {lab_number:02d} is your own reduction (policy [compile] {keys})")


def _top(header: str) -> str:
    return header.split("/", 1)[0]


# ---- hiding CUB and Thrust from a graded compile

def library_folders(dependencies: str, libraries: Iterable[Library] = HIDDEN) -> set[Path]:
    """The resolved top folders of the `libraries` headers an `nvcc -M` run listed."""
    libraries = tuple(libraries)
    found = set()
    for path in parse_dependencies(dependencies):
        hit = library_header(path, libraries)
        if hit:
            real = Path(os.path.realpath(path))
            found.add(real.parents[len(Path(hit[1]).parts) - 2])   # cub/a/b.cuh: the top is b.cuh's parent's parent
    return found


def hidden_library_folders(probe: Callable[[tuple[Path, ...]], str], known: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """Every CUB and Thrust folder the compiler finds. `probe(hidden)` runs `nvcc -M` on PROBE with
    `hidden` masked and returns its output (an empty string when it could not run). Raises
    RuntimeError when the folders cannot all be hidden."""
    hidden = tuple(Path(os.path.realpath(path)) for path in known if path.exists())
    for _ in range(MAX_ROUNDS):
        found = library_folders(probe(hidden))
        if found & set(hidden):
            raise RuntimeError("the compiler still finds CUB or Thrust in a hidden folder: " +
                               ", ".join(map(str, sorted(found & set(hidden)))))
        if not found:
            return hidden
        hidden += tuple(sorted(found))
    raise RuntimeError("the compiler still finds CUB or Thrust after hiding " + ", ".join(map(str, hidden)))
