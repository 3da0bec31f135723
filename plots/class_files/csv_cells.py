"""A CSV cell that a spreadsheet shows as text, and the text back from it.

The grader writes gradebook.csv and timings.csv with student names in them, and a name may start
with '=', '+', '-' or '@' (or a tab or a carriage return): a spreadsheet would run it as a formula
(=HYPERLINK(...), +cmd). Such a cell gets a leading "'", the spreadsheets' mark for text. So that
the plots, which read timings.csv, get the real name back (the name their figures' file names and
labels are made of), a text that starts with "'" itself gets one too: csv_text(csv_cell(x)) == x
for every x. The grader (grading/grader/report/reports.py) and the plots import it from this package
(class_files/__init__.py). It imports nothing.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")   # what makes a spreadsheet cell a formula
TEXT_MARK = "'"


def csv_cell(value) -> str:
    """`value` as a cell a spreadsheet shows as text: a leading ' before a formula's first character
    (or before a leading ', so that csv_text() can tell the two apart)."""
    text = "" if value is None else str(value)
    return TEXT_MARK + text if text[:1] in (*FORMULA_STARTS, TEXT_MARK) else text


def csv_text(cell: str) -> str:
    """What csv_cell() was given: its mark taken off (a cell that csv_cell() did not write, one
    whose "'" precedes anything else, is left as it is)."""
    if cell[:1] == TEXT_MARK and cell[1:2] in (*FORMULA_STARTS, TEXT_MARK):
        return cell[1:]
    return cell
