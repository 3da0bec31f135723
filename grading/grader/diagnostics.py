"""What a report may quote of a compile: the compiler's diagnostics about the student's own file.

A student region can `#include` any file the compiler can read; the compiler then quotes lines of
that file in its errors. So only diagnostics located in the spliced lab file are kept (with the
source lines and carets that follow them), plus the compiler's own summary lines; a diagnostic
located in any other file, and every "In file included from" line, is dropped.
"""

from __future__ import annotations

import re

# nvcc's front end: "path(12): error: ..."; the host compiler: "path:12:5: error: ..."
_EDG_HEADER = re.compile(r"^(?P<path>.+?)\((?P<line>\d+)\): (?P<kind>(catastrophic )?error|warning|remark)\b")
_GCC_HEADER = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(\d+:)? (?P<kind>(fatal )?error|warning|note)\b")
_INCLUDED_FROM = re.compile(r"^\s*(In file included from|from |In instantiation of|In function|At global scope)")
_SUMMARY = re.compile(r"^(\d+ errors? detected in the compilation of|compilation terminated|nvcc (fatal|error))",
                      re.IGNORECASE)
_UNPRINTABLE = re.compile(r"[^\t\x20-\x7e]")
MAX_CHARS = 12000


def student_diagnostics(output: str, source: str, shown_as: str) -> str:
    """The lines of `output` about `source` (an absolute path), with that path shown as `shown_as`."""
    kept: list[str] = []
    keeping = False
    for raw in output.splitlines():
        line = _UNPRINTABLE.sub("?", raw)
        header = _EDG_HEADER.match(line) or _GCC_HEADER.match(line)
        if header:
            keeping = header.group("path") == source
            if keeping:
                kept.append(line.replace(source, shown_as))
            continue
        if _INCLUDED_FROM.match(line):
            keeping = False
            continue
        if _SUMMARY.match(line.strip()):
            keeping = False
            kept.append(re.sub(r'"[^"]*"', f'"{shown_as}"', line.replace(source, shown_as)))
            continue
        if keeping:
            kept.append(line.replace(source, shown_as))
    text = "\n".join(kept).strip()
    return text[-MAX_CHARS:]


def first_error(diagnostics: str) -> str:
    return next((line.strip() for line in diagnostics.splitlines() if "error" in line), "")
