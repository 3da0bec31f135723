"""What the grader decides from what it saw: the trusted checker's reports (checks.py), verdicts,
sanitizer findings, points, integrity flags, and the rules a submission's files and includes must keep."""
