"""The sandbox tests' base case: a scratch folder per test and runs of a command in a sandbox as a
uid of its own; and a toolchain of this machine's CUDA toolkit for its views."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.manifest import Manifest
from grader.sandbox.bubblewrap import Limits, Sandbox, View
from grader.stages.toolchain import Toolchain

MIB = 1 << 20


class SandboxCase(unittest.TestCase):
    sandbox = Sandbox(enabled=False, reason="not detected yet")

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="sandbox-test-")).resolve()
        self.tmp.chmod(0o755)  # mkdtemp makes it 0700: uid 65534 could not read it when it is shown
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def folder(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir(parents=True)
        return path

    def run_in(self, argv, view=View(), limits=Limits(), sandbox=None, **kwargs) -> subprocess.CompletedProcess:
        """`argv` in the sandbox, as a uid of its own (`self.user`: the last run's)."""
        sandbox = sandbox or self.sandbox
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("timeout", 20)
        with sandbox.run_user() as user, sandbox.seccomp_fds() as fds:
            self.user = user   # for the test's own asserts; concurrent runs use their own `user`
            kwargs["pass_fds"] = (*fds, *kwargs.get("pass_fds", ()))
            return subprocess.run(sandbox.command(argv, view, user, fds), env=sandbox.environment(os.environ),
                                  preexec_fn=sandbox.preexec(limits), text=True, **kwargs)

    def sh(self, script: str, view=View(), limits=Limits()) -> subprocess.CompletedProcess:
        return self.run_in(["sh", "-c", script], view, limits)


def _real_toolchain(case: unittest.TestCase) -> Toolchain:
    """A toolchain of this machine's CUDA toolkit (for its views only); the test is skipped without nvcc."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).is_file():
        case.skipTest("no nvcc here (the CUDA toolkit's views need it)")
    return Toolchain(Manifest(REPO, REPO / "build", None, nvcc, [], []), case.sandbox)
