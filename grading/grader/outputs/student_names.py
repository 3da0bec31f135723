"""Which folder names can be a student's name, and how any name is shown on a console.

A student's name is its folder's name, as the class folder spells it: accents, spaces, CJK, an
e-mail address, a leading =, +, - or @, markup. It lands in a spreadsheet (a formula cell gets a
leading ': plots/class_files/csv_cells.py), a web page (escaped: report/site/markup.py), JUnit XML,
JSON, the console and file names (student_file_name(): %XX, bounded). What none of them can make
safe is refused, each for its reason:

- a name that is not valid UTF-8 (Linux folder names are bytes; Python hands the bytes that do not
  decode over as lone surrogates): no text format can hold it as it is;
- a control character (C0, DEL, C1: a bell, a newline forging a progress line, an escape sequence)
  or a line or paragraph separator (U+2028, U+2029, new lines to some readers);
- an invisible format character (Unicode category Cf: the bidirectional overrides and isolates,
  U+202A-U+202E and U+2066-U+2069, which make a name display as another; zero-width spaces and
  joiners; the soft hyphen): two names that look the same in the gradebook would be two students;
- a Unicode noncharacter (U+FFFE, U+FFFF, ...): XML 1.0 (junit.xml) cannot hold some of them;
- white space at either end: 'alice ' would look like 'alice', and CSV readers strip it;
- the empty name, '.', '..', a '/', and the names of timings.csv's rows that are not students.

Refusing, not rewriting: a rewritten name would be another student's, or no one's, in the LMS
that the gradebook goes back to. An instructor renames the folder; the refusal says why.
"""

from __future__ import annotations

import unicodedata

RESERVED_NAMES = ("reference", "baseline", "A/A", "roof", "cub")   # rows of timings.csv that are not students
_INVISIBLE = ("Cc", "Cf", "Cs", "Zl", "Zp")   # controls, format characters, surrogates, separators
_UNDECODED = range(0xDC80, 0xDD00)            # a byte that is not UTF-8, as os.fsdecode() hands it over


def _noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


_CONTROL_NAMES = {0x07: "BELL", 0x08: "BACKSPACE", 0x09: "TAB", 0x0A: "LINE FEED", 0x0D: "CARRIAGE RETURN",
                  0x1B: "ESCAPE", 0x7F: "DELETE", 0x85: "NEXT LINE"}   # Unicode gives controls no name


def _code_name(character: str) -> str:
    code = ord(character)
    name = unicodedata.name(character, "") or _CONTROL_NAMES.get(code, "")
    return f"U+{code:04X}" + (f" ({name})" if name else "")


def name_problem(name: str) -> str | None:
    """Why `name` (a folder name, as os.listdir() gives it) cannot be a student's name, or None."""
    if name in ("", ".", ".."):
        return "no name of a folder of its own"
    if "/" in name:
        return "holds a '/'"
    undecoded = [ord(c) - 0xDC00 for c in name if ord(c) in _UNDECODED]
    if undecoded:
        return "not valid UTF-8 (the byte(s) " + " ".join(f"\\x{b:02x}" for b in undecoded) + ")"
    for character in name:
        kind = unicodedata.category(character)
        if kind == "Cc":
            return f"holds a control character, {_code_name(character)}"
        if kind in ("Zl", "Zp"):
            return f"holds a line or paragraph separator, {_code_name(character)}"
        if kind in ("Cf", "Cs"):
            return (f"holds an invisible character, {_code_name(character)}, that changes how the name is shown "
                    "or makes it look like another")
        if _noncharacter(ord(character)):
            return f"holds a Unicode noncharacter, {_code_name(character)}"
    if name[0].isspace() or name[-1].isspace():
        return "begins or ends with white space (it would look like another name)"
    if name in RESERVED_NAMES:
        return "reserved: a row of timings.csv that is not a student"
    return None


def shown(name: str) -> str:
    """`name` as a console line (or a list of refused folders) can show it: every control, invisible
    or undecodable character written \\xNN, \\uNNNN or \\UNNNNNNNN, so that no name forges a line,
    moves the cursor, reorders the text around it or rings a bell. A valid name is shown as it is."""
    parts = []
    for character in name:
        code = ord(character)
        if code in _UNDECODED:
            parts.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(character) in _INVISIBLE or _noncharacter(code):
            parts.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            parts.append(character)
    return "".join(parts)


def width(text: str) -> int:
    """The columns `text` takes on a terminal: CJK characters two, combining marks none."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def padded(text: str, columns: int) -> str:
    """`text` and spaces to `columns` terminal columns (str.ljust counts characters, not columns)."""
    return text + " " * max(0, columns - width(text))
