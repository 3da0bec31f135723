"""reduction-labs grader: grades student submissions by running the C++ test runner, compute-sanitizer
and the benchmark as subprocesses (student code never runs inside the grader). Standard library only.

Entry points: grading/grade.py (grading) and grading/release.py (the student distribution).
"""
