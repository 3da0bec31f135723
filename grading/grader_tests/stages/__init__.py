"""Tests of grader/stages/ (the pipeline, its stages, the scheduler, the timing runs)."""
