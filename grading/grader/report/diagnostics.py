"""What a report may quote of a compile: the compiler's diagnostics located in the student's own
file and in public headers.

A student region can `#include` any file the compiler can read (or name one with `#line`); the
compiler then quotes lines of that file in its errors. So a diagnostic is kept, with the source lines
and carets that follow it, only when it is located in the spliced lab file or in a public folder:
the CUDA toolkit's include folders, the harness include dirs (the course's own headers) and the host
compiler's standard headers. An honest student's error inside cooperative_groups.h or a libcu++
header is shown, with the chain of "In file included from" lines that leads to it when every file of
that chain is public too. Every path is resolved first (`..`, symbolic links), so
"/usr/local/cuda/include/../../../../etc/passwd" is /etc/passwd; a relative path is never public.
Everything located elsewhere (/etc/passwd, /proc, the compiler's temporary files) is dropped, and
the report says how many lines were left out. The compiler's summary lines are kept.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Iterable

from ..sandbox.toolkit import toolkit_of

# nvcc's front end: "path(12): error: ..."; the host compiler: "path:12:5: error: ...", "path:12:5:   required
# from ...", "path: In function 'f':"; the chain before a diagnostic: "In file included from path:12," then
# "                 from path:3:".
_EDG_HEADER = re.compile(r"^(?P<path>\S.*?)\((?P<line>\d+)\): (?P<kind>(catastrophic )?error|warning|remark)\b")
_GCC_HEADER = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(\d+:)? ")
_GCC_CONTEXT = re.compile(r"^(?P<path>[^\s:][^:]*): (In |At global scope)")
_INCLUDED_FROM = re.compile(r"^(In file included from|\s+from) (?P<path>.+?):(?P<line>\d+)(:\d+)?[,:]\s*$")
_SUMMARY = re.compile(r"^(\d+ errors? detected in the compilation of|compilation terminated|nvcc (fatal|error))",
                      re.IGNORECASE)
_UNPRINTABLE = re.compile(r"[^\t\x20-\x7e]")
MAX_CHARS = 12000
HOST_HEADERS = ("/usr/include", "/usr/lib/gcc")   # the host compiler's standard headers


def public_folders(nvcc: str, include_dirs: Iterable[str]) -> tuple[Path, ...]:
    """The folders whose files a report may quote, resolved: the toolkit's include folders (of the
    nvcc that compiles), the harness include dirs and the host compiler's standard headers."""
    folders = list(HOST_HEADERS) + list(include_dirs)
    if os.path.isabs(nvcc) or shutil.which(nvcc):
        toolkit = toolkit_of(nvcc)   # where nvcc says it is: the nvcc on PATH may be a wrapper script
        folders += [toolkit.root / "include", *sorted((toolkit.root / "targets").glob("*/include")), *toolkit.include_dirs]
    return tuple(dict.fromkeys(Path(os.path.realpath(folder)) for folder in folders))


def _is_public(path: str, source: str, folders: tuple[Path, ...]) -> bool:
    if path == source:
        return True
    if not path.startswith("/"):
        return False
    real = Path(os.path.realpath(path))
    return real == Path(os.path.realpath(source)) or any(folder == real or folder in real.parents for folder in folders)


def student_diagnostics(output: str, source: str, shown_as: str, folders: tuple[Path, ...] = ()) -> str:
    """The lines of `output` located in `source` (an absolute path, shown as `shown_as`) or in
    `folders` (public_folders()), and a count of the lines left out."""
    kept: list[str] = []
    chain: list[tuple[str, bool]] = []   # "In file included from" lines waiting for the diagnostic they lead to
    keeping: bool | None = None          # None: not inside a located diagnostic
    dropped = 0

    def show(line: str) -> str:
        return line.replace(source, shown_as)

    def end_chain(leads_to_kept: bool) -> None:
        nonlocal dropped
        if leads_to_kept and all(public for _, public in chain):
            kept.extend(show(line) for line, _ in chain)
        else:
            dropped += len(chain)
        chain.clear()

    for raw in output.splitlines():
        line = _UNPRINTABLE.sub("?", raw)
        included = _INCLUDED_FROM.match(line)
        if included:
            chain.append((line, _is_public(included.group("path"), source, folders)))
            keeping = None
            continue
        header = _EDG_HEADER.match(line) or _GCC_HEADER.match(line) or _GCC_CONTEXT.match(line)
        if header:
            keeping = _is_public(header.group("path"), source, folders)
            end_chain(keeping)
            if keeping:
                kept.append(show(line))
            else:
                dropped += 1
            continue
        if _SUMMARY.match(line.strip()):
            end_chain(False)
            keeping = None
            kept.append(re.sub(r'"[^"]*"', f'"{shown_as}"', show(line)))
            continue
        if keeping:
            kept.append(show(line))
        elif keeping is False and line.strip():
            dropped += 1
    end_chain(False)
    if dropped:
        kept.append(f"({dropped} diagnostic line(s) located in other files are not shown)")
    text = "\n".join(kept).strip()
    return text[-MAX_CHARS:]


_ERROR = re.compile(r"(\): |:\d+: )((catastrophic|fatal) )?error\b|^nvcc (fatal|error)", re.IGNORECASE)


def first_error(diagnostics: str) -> str:
    """The first diagnostic that is an error (not a quoted source line that says "error")."""
    lines = diagnostics.splitlines()
    return next((line.strip() for line in lines if _ERROR.search(line)),
                next((line.strip() for line in lines if "error" in line), ""))
