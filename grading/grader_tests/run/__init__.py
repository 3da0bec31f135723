"""Tests of grader/run/ (the job, the launchers, the class folder, Slurm)."""
