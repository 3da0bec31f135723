"""Tests of grader/judge/ (checker reports, verdicts, sanitizer findings, points, flags)."""
