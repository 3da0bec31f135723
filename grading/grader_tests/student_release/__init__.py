"""Tests of grading/student_release/ (the student distribution and its leak check)."""
