"""The one name of a student's files and folders, as a function of the student's folder name.

Every per-student path of a grading (OUT/students/<name>.json, gradescope/<name>/, work/<name>/,
the claim locks, the report's students/<name>.html) and every per-student figure
(student_<name>.png) is named by student_file_name(), and by nothing else, so two students never
share a file. The grader (grading/grader/outputs/student_paths.py) and the plots import it from this
package (class_files/__init__.py says how), so it imports nothing of either: no matplotlib.
"""

from __future__ import annotations

import hashlib

_PLAIN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
# The longest file name: with "student_" before it, ".json", ".html" or ".lock" after it, and the
# temporary name of an atomic write around that (".NAME.html.XXXXXXXX.tmp"), far below the 255
# bytes a Linux file name may have.
MAX_LENGTH = 128
HASHED = "~"   # between the readable prefix and the hash of a long name; never in an encoded one (%7E)
_DIGITS = 64   # SHA-256, in hex


def _encoded(character: str, first: bool) -> str:
    data = character.encode("utf-8", errors="surrogatepass")  # a lone surrogate too: never two names to one
    return "".join(chr(byte) if byte in _PLAIN and not (first and byte == ord(".")) else f"%{byte:02X}"
                   for byte in data)


def student_file_name(student: str) -> str:
    """`student` with [A-Za-z0-9._-] kept and every other byte of its UTF-8 form written %XX ('%'
    included, and a leading '.'): names that differ give names that differ (urllib.parse.unquote
    takes it back), a plain name stays as it is, and the result is never empty, '.', '..', hidden
    or a path. Case is kept: 'Alice' and 'alice' are two files, as they are two folders.

    A name whose encoded form is longer than MAX_LENGTH (a long name in CJK characters: 9
    characters a character) is instead the encoded form's first whole characters, '~' and the
    SHA-256 of the name's UTF-8 bytes: bounded, still one file per name (an encoded form never
    holds '~', and two long names share a file only if SHA-256 collides), and the same on every run."""
    if not student:
        raise ValueError("a student's name is never empty")
    pieces = [_encoded(character, index == 0) for index, character in enumerate(student)]
    whole = "".join(pieces)
    if len(whole) <= MAX_LENGTH:
        return whole
    digest = hashlib.sha256(student.encode("utf-8", errors="surrogatepass")).hexdigest()
    room, prefix = MAX_LENGTH - len(HASHED) - _DIGITS, ""
    for piece in pieces:
        if len(prefix) + len(piece) > room:
            break
        prefix += piece
    return prefix + HASHED + digest
