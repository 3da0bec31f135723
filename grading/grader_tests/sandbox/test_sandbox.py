"""The sandbox's command line and degraded mode (no root or bubblewrap needed), and on a machine with
NVIDIA GPUs a GPU run's own device node (real runs under bubblewrap: test_sandbox_runs.py)."""

import os
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from grader_tests.helpers import REPO
from grader_tests.sandbox_fixtures import MIB, SandboxCase, _real_toolchain
from grader.judge.checks import parse_device_check
from grader.sandbox.gpu_nodes import bus_id_key
from grader.sandbox.run_users import RunUser
from grader.sandbox.bubblewrap import Limits, Sandbox, View


class TestWithoutTheSandbox(SandboxCase):
    """Degraded mode and the command line: no root or bubblewrap needed."""

    def test_degraded_mode_runs_the_command_as_it_is_and_says_so(self):
        sandbox = Sandbox(enabled=False, reason="test")
        view = View(read_only=(self.tmp,), writable=(self.tmp,), gpu=True, cwd=self.tmp)
        with sandbox.run_user() as user:
            self.assertIsNone(user)
            self.assertEqual(sandbox.command(["nvcc", "-c", "x.cu"], view, user), ["nvcc", "-c", "x.cu"])
        self.assertEqual(sandbox.describe(), "UNSANDBOXED: test")
        mode = self.tmp.stat().st_mode
        sandbox.prepare_scratch(self.tmp, None)
        self.assertEqual(self.tmp.stat().st_mode, mode, "degraded mode must not chown or chmod scratch folders")

    def test_degraded_mode_still_limits_file_size(self):
        out = self.tmp / "flood.out"
        with open(out, "wb") as handle:
            result = subprocess.run(["head", "-c", str(2 * MIB), "/dev/zero"], stdout=handle, timeout=20,
                                    preexec_fn=Sandbox(enabled=False, reason="test").preexec(Limits(file_bytes=MIB)))
        self.assertNotEqual(result.returncode, 0, "a 2 MiB write under a 1 MiB RLIMIT_FSIZE must fail")
        self.assertLessEqual(out.stat().st_size, MIB)

    def test_environment_keeps_only_the_whitelist(self):
        parent = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0", "HOME": "/root",
                  "REDUCTION_CALL_TIMEOUT_S": "5", "GITHUB_TOKEN": "secret", "LD_PRELOAD": "/x.so"}
        env = Sandbox(enabled=False, reason="test").environment(parent)
        self.assertEqual(env, {"PATH": "/usr/bin", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0",
                               "HOME": "/tmp", "TMPDIR": "/tmp"})

    def test_detect_needs_root_and_bwrap(self):
        with mock.patch("os.geteuid", return_value=1000):
            sandbox = Sandbox.detect([self.tmp])
        self.assertFalse(sandbox.enabled)
        self.assertTrue(sandbox.reason.startswith("not root"), sandbox.reason)
        self.assertTrue(sandbox.describe().startswith("UNSANDBOXED: not root"))
        with mock.patch("os.geteuid", return_value=0), mock.patch("shutil.which", return_value=None):
            sandbox = Sandbox.detect([self.tmp])
        self.assertFalse(sandbox.enabled)
        self.assertTrue(sandbox.reason.startswith("bwrap not found"), sandbox.reason)

    def test_hidden_paths_are_masked_before_the_view_is_bound_on_top(self):
        repo, harness = self.folder("repo"), self.folder("repo/common")
        sandbox = Sandbox(enabled=True, hidden=(repo, Path("/etc/passwd"), Path("/srv/elsewhere")))
        command = sandbox.command(["true"], View(read_only=(self.tmp, harness)), RunUser(65123, 65123))
        self.assertNotIn("/", [command[i + 1] for i, arg in enumerate(command) if arg in ("--bind", "--ro-bind")],
                         "the whole root must never be bound")

        def position(*args):
            for i in range(len(command)):
                if command[i:i + len(args)] == list(args):
                    return i
            self.fail(f"{' '.join(args)} not in {command}")
        self.assertLess(position("--ro-bind", "/etc", "/etc"), position("--ro-bind", "/dev/null", "/etc/passwd"))
        self.assertLess(position("--ro-bind", str(self.tmp), str(self.tmp)), position("--tmpfs", str(repo)))
        self.assertLess(position("--tmpfs", str(repo)), position("--ro-bind", str(harness), str(harness)))
        self.assertLess(position("--tmpfs", "/tmp"), position("--ro-bind", str(self.tmp), str(self.tmp)))
        self.assertNotIn("/srv/elsewhere", command, "a hidden path nothing shows needs no mask")
        self.assertLess(position("--ro-bind", str(harness), str(harness)), position("--reuid=65123"))
        self.assertIn("--regid=65123", command)
        self.assertEqual(command[-2:], ["--", "true"])


class TestSandboxedGpu(SandboxCase):
    """On a machine with NVIDIA GPUs: a GPU run sees the node of its own GPU alone, and CUDA finds that
    GPU there (REDUCTION_CHECKER, set by CTest, names the trusted checker); skipped without a GPU."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")
        try:
            listing = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            listing = ""
        cls.bus_ids = [line.strip() for line in listing.splitlines() if line.strip()]
        if not cls.bus_ids:
            raise unittest.SkipTest("no NVIDIA GPU here (nvidia-smi lists none)")

    def test_a_gpu_run_sees_only_its_own_device_node(self):
        for bus_id in self.bus_ids:
            sandbox = self.sandbox.with_gpu(bus_id)
            self.assertTrue(sandbox.gpu.isolated, sandbox.gpu.note)
            own = sandbox.gpu.nodes[0][1].name
            result = self.run_in(["sh", "-c", "ls /dev | grep nvidia; echo --; ls /proc/driver/nvidia/gpus; echo --; "
                                  "echo $CUDA_VISIBLE_DEVICES; grep ModifyDeviceFiles /proc/driver/nvidia/params"],
                                 View(gpu=True, etc="minimal"), sandbox=sandbox)
            self.assertEqual(result.returncode, 0, result.stderr)
            nodes, gpus, rest = (part.split() for part in result.stdout.split("--\n"))
            self.assertEqual(set(nodes) - {"nvidia-uvm-tools"}, {own, "nvidiactl", "nvidia-uvm"}, result.stderr)
            self.assertEqual([bus_id_key(name) for name in gpus], [bus_id_key(bus_id)])
            self.assertEqual(rest[0], "0")
            self.assertEqual(rest[1:], ["ModifyDeviceFiles:", "0"])

    def test_cuda_and_compute_sanitizer_find_the_gpu_in_its_sandbox(self):
        checker = Path(os.environ.get("REDUCTION_CHECKER", "/nonexistent"))
        if not checker.is_file():
            self.skipTest("REDUCTION_CHECKER names no checker (run through ctest -R grader.unit)")
        trusted = parse_device_check(subprocess.run([str(checker), "device"], capture_output=True, text=True,
                                                    timeout=120).stdout)
        self.assertTrue(trusted and trusted.devices > 0 and bus_id_key(trusted.pci_bus_id), trusted)
        sandbox = self.sandbox.with_gpu(trusted.pci_bus_id, os.environ.get("CUDA_VISIBLE_DEVICES", ""))
        self.assertTrue(sandbox.gpu.isolated, sandbox.gpu.note)
        toolchain = _real_toolchain(self)
        view = toolchain._run_view((checker,), gpu=True)   # what a test run of a GPU lab gets
        run = self.run_in([str(checker), "device"], view, sandbox=sandbox, timeout=120)
        seen = parse_device_check(run.stdout)
        self.assertIsNotNone(seen, run.stderr)
        self.assertEqual((seen.devices, bus_id_key(seen.pci_bus_id)), (1, bus_id_key(trusted.pci_bus_id)), run.stderr)
        sanitizer = toolchain.sanitizer_path()
        if not sanitizer:
            self.skipTest("compute-sanitizer not found")
        home = Path(sanitizer).resolve().parent.parent
        result = self.run_in([sanitizer, "--tool", "memcheck", "--error-exitcode", "99", str(checker), "device"],
                             toolchain._run_view((checker, home), gpu=True), sandbox=sandbox, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout[-2000:] + result.stderr[-2000:])
        self.assertIn("ERROR SUMMARY: 0 errors", result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
