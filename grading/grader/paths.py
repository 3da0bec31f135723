"""Where the grader's own files are: its folder (grading/) and the course repository above it."""

from pathlib import Path

GRADING_DIR = Path(__file__).resolve().parent.parent
REPO = GRADING_DIR.parent
DEFAULT_POLICY = GRADING_DIR / "policy.toml"
GRADE_PY = GRADING_DIR / "grade.py"
