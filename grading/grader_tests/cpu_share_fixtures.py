"""The CPU share tests' base case: a temporary folder for made-up cgroup trees (cgroup_fixtures.py)
and a grader's CpuShare on one."""

import tempfile
import unittest
from pathlib import Path

from grader.sandbox.cgroups import ROOT_NAME, Trees, detect
from grader.sandbox.cpu_share import CpuShare


class TreeCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name) / "cg roups"   # a space: /proc/self/mounts escapes it

    def tearDown(self):
        self.tmp.cleanup()

    def share(self, mounts, fs, cores=range(4), name="g1-1"):
        trees = detect(mounts, fs)
        self.assertIsInstance(trees, Trees, trees)
        return CpuShare(trees, fs=fs, cores=set(cores), name=name)

    def ours(self, fs, share):
        """Every folder of a grader's subtree, in every tree."""
        return [p for tree in share.trees.all() for p in (tree / ROOT_NAME / share.name).rglob("*") if p.is_dir()]
