"""Tests of grader/sandbox/ (bubblewrap, seccomp, uids, cgroups, processes)."""
