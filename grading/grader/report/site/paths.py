"""Where the report's pages are, inside OUT/report/: a page per student for the instructor, and a
copy for the student alone (handout). Named as the student's other files (student_paths.py)."""

from __future__ import annotations

from class_files.names import student_file_name

STUDENTS = "students"
HANDOUTS = "handouts"


def student_page_path(student: str) -> str:
    """The instructor's page of the student."""
    return f"{STUDENTS}/{student_file_name(student)}.html"


def handout_path(student: str) -> str:
    """The page the instructor may send to the student: nothing of a classmate's or of the machine's."""
    return f"{HANDOUTS}/{student_file_name(student)}.html"


def record_copy_path(student: str) -> str:
    """The copy of the student's signed record (OUT/students/<name>.json)."""
    return f"records/{student_file_name(student)}.json"


def gradescope_copy_path(student: str) -> str:
    """The copy of the student's Gradescope results (OUT/gradescope/<name>/results.json)."""
    return f"gradescope/{student_file_name(student)}/results.json"
