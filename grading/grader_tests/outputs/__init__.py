"""Tests of grader/outputs/ (records, events, program output)."""
