"""Tests of grading/tools/ (the A/A check, the throughput benchmark, the student tools)."""
