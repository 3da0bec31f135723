"""What a student's program printed, as its own report shows it.

Honest students print: a debugging line, a banner without a newline, a table of partial sums. The
runner's report travels on a channel of its own (process.py), so the program's stdout and stderr
are only the student's, and the report shows them as program output: the start and the end of
each stream, at most PROGRAM_OUTPUT_BYTES in all, with anything that is not printable text (a
terminal escape, a carriage return, a bidirectional override) replaced by "?". The sandbox
decides what the program could read and so print: never the grader's files, its environment or a
classmate's (docs/grading-security.md).
"""

from __future__ import annotations

PROGRAM_OUTPUT_BYTES = 16 << 10   # both streams together, as the report shows them
_TAIL_SHARE = 4                   # a quarter of a stream's share goes to its end


def _printable(text: str) -> str:
    return "".join(ch if ch in "\n\t" or ch.isprintable() else "?" for ch in text)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = limit // _TAIL_SHARE
    head = limit - tail
    return text[:head] + f"\n[... {len(text) - head - tail} characters left out ...]\n" + text[-tail:]


def program_output(stdout: str, stderr: str, limit: int = PROGRAM_OUTPUT_BYTES) -> str:
    """The report's text for one run's two streams; "" when the program printed nothing."""
    streams = [(name, text) for name, text in (("stdout", stdout), ("stderr", stderr)) if text.strip()]
    if not streams:
        return ""
    share = limit // len(streams)
    return "\n".join(f"[{name}]\n" + _clip(_printable(text), share).rstrip("\n") for name, text in streams)
