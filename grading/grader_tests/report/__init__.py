"""Tests of grader/report/ (the class outputs and the report site)."""
