"""The one name of a student's files and folders, as a function of the student's folder name.

Every per-student path of a grading (OUT/students/<name>.json, gradescope/<name>/, work/<name>/,
the claim locks) and every per-student figure (student_<name>.png) is named by
student_file_name(), and by nothing else, so two students never share a file. It is defined here,
in the plots, because plots/ must run on its own (a student's benchmark CSV, no grader) and never
imports the grader; the grader imports this module (grading/grader/student_paths.py), which is why
it imports nothing itself: no matplotlib, no other module of the plots.
"""

from __future__ import annotations

_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def student_file_name(student: str) -> str:
    """`student` with [A-Za-z0-9._-] kept and every other byte of its UTF-8 form written %XX ('%'
    included, and a leading '.'): names that differ give names that differ (urllib.parse.unquote
    takes it back), a plain name stays as it is, and the result is never empty, '.', '..', hidden
    or a path. Case is kept: 'Alice' and 'alice' are two files, as they are two folders."""
    if not student:
        raise ValueError("a student's name is never empty")
    data = student.encode("utf-8", errors="surrogatepass")  # a lone surrogate too: never two names to one
    return "".join(chr(byte) if byte in _PLAIN and not (index == 0 and byte == ord(".")) else f"%{byte:02X}"
                   for index, byte in enumerate(data))
