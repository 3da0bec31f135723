"""The student distribution (build.py: python3 grading/release.py), and the check that no reference
solution leaks into it."""
