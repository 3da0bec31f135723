"""Which NVIDIA nodes and driver files a GPU run's sandbox gets (gpu_nodes.py), on made-up /dev and
/proc/driver/nvidia trees of 1, 2 and 8 GPUs: its own GPU's alone, whichever way its bus id is
spelled; every node, and why, when that GPU cannot be identified."""

import dataclasses
import functools
import os
import random
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader.sandbox.gpu_nodes import DEV, DRIVER_PROC, bus_id_key, every_node, own_node
from grader.manifest import Manifest
from grader.sandbox.bubblewrap import Sandbox
from grader.stages.toolchain import Toolchain
from grader.sandbox.process import ProcessResult

BUS_IDS = ["0000:18:00.0", "0000:2a:00.0", "0000:3b:00.0", "0000:5d:00.0",
           "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0001:db:00.0"]


def spellings(bus_id: str) -> list[str]:
    """How the driver, nvidia-smi and cudaDeviceGetPCIBusId write the same id."""
    domain, rest = bus_id.split(":", 1)
    return [bus_id, bus_id.upper(), f"0000{domain}:{rest}".upper(), f"{int(domain, 16):08x}:{rest}"]


class GpuTree:
    """A made-up /dev and /proc/driver/nvidia of `count` GPUs whose minor numbers are not in bus order."""

    def __init__(self, root: Path, count: int, seed: int = 1):
        self.dev, self.driver = root / "dev", root / "proc/driver/nvidia"
        (self.driver / "gpus").mkdir(parents=True)
        (self.dev / "nvidia-caps").mkdir(parents=True)
        self.minors = list(range(count))
        random.Random(seed).shuffle(self.minors)
        self.bus_ids = BUS_IDS[:count]
        for bus_id, minor in zip(self.bus_ids, self.minors):
            folder = self.driver / "gpus" / bus_id
            folder.mkdir()
            (folder / "information").write_text(f"Model: \t\t NVIDIA H100\nIRQ:   \t\t 42\nGPU UUID: \t GPU-{minor}\n"
                                                f"Video BIOS: \t ??.??.??.??.??\nBus Type: \t PCIe\n"
                                                f"DMA Size: \t 52 bits\nBus Location: \t {bus_id}\n"
                                                f"Device Minor: \t {minor}\n", encoding="utf-8")
            (self.dev / f"nvidia{minor}").touch()
        for name in ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"):
            (self.dev / name).touch()
        (self.driver / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05\n")
        (self.driver / "registry").write_text("Binary: \"\"\n")
        (self.driver / "params").write_text("ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\n")

    def minor_of(self, bus_id: str) -> int:
        return self.minors[self.bus_ids.index(bus_id)]


class TestGpuNodes(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gpu-nodes-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.generated = self.tmp / "generated"
        self.generated.mkdir()

    def tree(self, count: int) -> GpuTree:
        return GpuTree(self.tmp / f"machine-{count}", count)

    def test_bus_ids_in_every_spelling_are_one(self):
        for bus_id in BUS_IDS:
            self.assertEqual({bus_id_key(text) for text in spellings(bus_id)}, {bus_id_key(bus_id)})
        self.assertEqual(bus_id_key("3b:00.0"), (0, 0x3B, 0, 0))
        self.assertNotEqual(bus_id_key("0000:3b:00.0"), bus_id_key("0001:3b:00.0"))
        for bad in ("", "GPU-1234", "0000:3b:00", "0000:3b:00.8", "0000:3b:00.0\n0000:18:00.0", "zz:00.0"):
            self.assertIsNone(bus_id_key(bad), bad)

    def test_each_gpu_of_1_2_and_8_gets_its_own_node_alone(self):
        for count in (1, 2, 8):
            tree = self.tree(count)
            for bus_id in tree.bus_ids:
                for spelled in spellings(bus_id):
                    with self.subTest(count=count, bus_id=spelled):
                        view = own_node(spelled, self.generated, tree.dev, tree.driver)
                        minor = tree.minor_of(bus_id)
                        self.assertTrue(view.isolated, view.note)
                        self.assertEqual(view.nodes, ((tree.dev / f"nvidia{minor}", DEV / f"nvidia{minor}"),
                                                      (tree.dev / "nvidiactl", DEV / "nvidiactl"),
                                                      (tree.dev / "nvidia-uvm", DEV / "nvidia-uvm"),
                                                      (tree.dev / "nvidia-uvm-tools", DEV / "nvidia-uvm-tools")))
                        gpus = [target for _, target in view.driver_files if target.parent == DRIVER_PROC / "gpus"]
                        self.assertEqual(gpus, [DRIVER_PROC / "gpus" / bus_id])
                        self.assertEqual({target.name for _, target in view.driver_files},
                                         {bus_id, "version", "registry", "params"})
                        self.assertIn(f"/dev/nvidia{minor}", view.note)

    def test_the_mounts_hide_every_other_gpu(self):
        tree = self.tree(8)
        bus_id = tree.bus_ids[5]
        args = own_node(bus_id, self.generated, tree.dev, tree.driver).mounts()
        bound = [args[i + 2] for i, arg in enumerate(args) if arg in ("--dev-bind", "--ro-bind")]
        others = {f"/dev/nvidia{tree.minor_of(other)}" for other in tree.bus_ids if other != bus_id}
        self.assertFalse(others & set(bound), bound)
        self.assertNotIn("/dev/nvidia-caps", bound)
        self.assertNotIn("/dev/nvidia-modeset", bound)
        tmpfs = args.index("--tmpfs")
        self.assertEqual(args[tmpfs - 2:tmpfs + 2], ["--perms", "0555", "--tmpfs", str(DRIVER_PROC)])
        self.assertLess(tmpfs, args.index(str(DRIVER_PROC / "gpus" / bus_id)), "the tmpfs first, its GPU on it")
        self.assertIn(str(DRIVER_PROC / "gpus"), args[args.index("--dir") + 1:args.index("--dir") + 2])

    def test_params_say_the_driver_library_must_not_make_nodes(self):
        tree = self.tree(2)
        view = own_node(tree.bus_ids[1], self.generated, tree.dev, tree.driver)
        params = dict((target.name, source) for source, target in view.driver_files)["params"]
        self.assertTrue(params.is_relative_to(self.generated))
        self.assertEqual(params.read_text().splitlines(), ["ResmanDebugLevel: 4294967295", "ModifyDeviceFiles: 0",
                                                           "DeviceFileUID: 0"])
        self.assertIn("ModifyDeviceFiles: 1", (tree.driver / "params").read_text(), "the machine's stays as it is")

    def test_every_node_when_the_gpu_cannot_be_identified(self):
        tree = self.tree(2)
        every = {target for _, target in every_node("x", tree.dev).nodes}
        self.assertEqual(every, {DEV / name for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm",
                                                         "nvidia-uvm-tools", "nvidia-modeset", "nvidia-caps")})
        cases = {"an unknown bus id": ("0000:99:00.0", {}),
                 "no bus id": ("", {}),
                 "a MIG instance": (tree.bus_ids[0], {"visible_devices": "MIG-4f2d7a1e-8f5c-5b8e-9b1a-2c3d4e5f6a7b"}),
                 "no driver folder": (tree.bus_ids[0], {"driver": self.tmp / "no/proc/driver/nvidia"})}
        for why, (bus_id, extra) in cases.items():
            with self.subTest(why):
                view = own_node(bus_id, self.generated, tree.dev, **{"driver": tree.driver, **extra})
                self.assertFalse(view.isolated)
                self.assertEqual({target for _, target in view.nodes}, every)
                self.assertEqual(view.driver_files, ())
                self.assertTrue(view.note.startswith("GPU: every device node (its GPU could not be identified"), view.note)

    def test_every_node_when_the_driver_files_do_not_add_up(self):
        for damage in ("no minor", "no node", "no uvm"):
            with self.subTest(damage):
                tree = GpuTree(self.tmp / damage.replace(" ", "-"), 2)
                bus_id = tree.bus_ids[1]
                if damage == "no minor":
                    (tree.driver / "gpus" / bus_id / "information").write_text("Model: NVIDIA H100\n")
                elif damage == "no node":
                    (tree.dev / f"nvidia{tree.minor_of(bus_id)}").unlink()
                else:
                    (tree.dev / "nvidia-uvm").unlink()
                view = own_node(bus_id, self.generated, tree.dev, tree.driver)
                self.assertFalse(view.isolated, view.note)
                self.assertEqual(view.driver_files, ())

    @unittest.skipUnless(os.geteuid() == 0, "needs root to make a character device")
    def test_a_node_with_another_minor_number_is_not_trusted(self):
        tree = self.tree(2)
        bus_id = tree.bus_ids[0]
        node = tree.dev / f"nvidia{tree.minor_of(bus_id)}"
        node.unlink()
        try:
            os.mknod(node, 0o600 | 0o020000, os.makedev(195, 7))
        except OSError as exc:
            self.skipTest(f"cannot make a device node here: {exc}")
        view = own_node(bus_id, self.generated, tree.dev, tree.driver)
        self.assertFalse(view.isolated)
        self.assertIn("195:7", view.note)

    def test_the_sandbox_shows_one_gpu_as_device_0_and_says_which(self):
        tree = self.tree(8)
        sandbox = Sandbox(enabled=True, version="bubblewrap 0.8.0", generated=self.generated)
        isolated = dataclasses.replace(sandbox, gpu=own_node(tree.bus_ids[3], self.generated, tree.dev, tree.driver))
        env = isolated.environment({"CUDA_VISIBLE_DEVICES": "3", "PATH": "/usr/bin"})
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "0")
        self.assertIn(f"GPU: its own device node only (/dev/nvidia{tree.minor_of(tree.bus_ids[3])}", isolated.describe())
        fallback = sandbox.with_every_gpu_node("its GPU could not be identified: test")
        self.assertEqual(fallback.environment({"CUDA_VISIBLE_DEVICES": "3"})["CUDA_VISIBLE_DEVICES"], "3")
        self.assertIn("GPU: every device node (its GPU could not be identified: test)", fallback.describe())


class TestToolchainFindsItsGpu(unittest.TestCase):
    """Toolchain.gpu_available(): the checker's bus id limits the GPU runs to that GPU's node, when the
    checker run in such a sandbox finds that GPU there; else every node, and why (made-up tree and runs)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="gpu-toolchain-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.tree = GpuTree(self.tmp / "machine", 8)
        (self.tmp / "generated").mkdir()
        self.sandbox = Sandbox(enabled=True, version="bubblewrap 0.8.0", generated=self.tmp / "generated")
        self.manifest = Manifest(self.tmp, self.tmp / "build", None, "/usr/local/cuda/bin/nvcc", [], [])
        self.sandboxed: list[tuple[list[str], dict]] = []

    def grade_on(self, bus_id: str, sandboxed_answer: ProcessResult) -> Toolchain:
        def run_process(command, timeout, env=None, **_):
            if command[0] == "nvidia-smi":
                return ProcessResult(0, "GPU 0: NVIDIA H100 (UUID: GPU-1)\n", "", False, 0.1, command, timeout)
            if command[0] == str(self.manifest.checker):   # the trusted run
                return ProcessResult(0, f'{{"devices":8,"name":"NVIDIA H100","pci_bus_id":"{bus_id}"}}\n', "", False,
                                     0.5, command, timeout)
            self.sandboxed.append((command, env))
            return sandboxed_answer

        tree_node = functools.partial(own_node, dev=self.tree.dev, driver=self.tree.driver)
        with mock.patch("grader.stages.toolchain.run_process", run_process), mock.patch("grader.sandbox.bubblewrap.own_node", tree_node), \
                mock.patch("shutil.which", return_value="/usr/bin/nvidia-smi"):
            toolchain = Toolchain(self.manifest, self.sandbox)
            self.assertTrue(toolchain.gpu_available())
        return toolchain

    def test_a_gpu_cuda_finds_in_its_sandbox_is_the_only_one_bound(self):
        bus_id = self.tree.bus_ids[4]
        answer = ProcessResult(0, f'{{"devices":1,"name":"NVIDIA H100","pci_bus_id":"{bus_id.upper()}"}}\n', "", False,
                               0.5, [], 120)
        toolchain = self.grade_on("0000" + bus_id.upper(), answer)
        minor = self.tree.minor_of(bus_id)
        self.assertTrue(toolchain.sandbox.gpu.isolated, toolchain.sandbox.gpu.note)
        self.assertIn(f"GPU: its own device node only (/dev/nvidia{minor}", toolchain.sandbox_status())
        (command, env), = self.sandboxed
        nodes = [command[i + 2] for i, arg in enumerate(command) if arg == "--dev-bind"]
        self.assertEqual(nodes[0], f"/dev/nvidia{minor}")
        self.assertFalse([node for node in nodes if node.removeprefix("/dev/nvidia").isdigit() and node != nodes[0]])
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "0")
        windows = [command[i:i + 3] for i in range(len(command))]
        self.assertNotIn(["--ro-bind", "/etc", "/etc"], windows, "a run's view: the minimal /etc")

    def test_a_gpu_cuda_does_not_find_there_leaves_every_node_bound_and_says_why(self):
        answer = ProcessResult(1, '{"devices":0,"name":"","pci_bus_id":""}\n',
                               "reduction_lab_check: no CUDA-capable device is detected\n", False, 0.5, [], 120)
        toolchain = self.grade_on(self.tree.bus_ids[1], answer)
        self.assertFalse(toolchain.sandbox.gpu.isolated)
        self.assertIn("GPU: every device node (a sandbox with only /dev/nvidiaN of", toolchain.sandbox_status())
        self.assertIn("no CUDA-capable device", toolchain.sandbox_status())

    def test_a_sandbox_that_finds_another_gpu_is_not_believed(self):
        answer = ProcessResult(0, f'{{"devices":1,"name":"x","pci_bus_id":"{self.tree.bus_ids[0]}"}}\n', "", False,
                               0.5, [], 120)
        toolchain = self.grade_on(self.tree.bus_ids[2], answer)
        self.assertFalse(toolchain.sandbox.gpu.isolated)


if __name__ == "__main__":
    unittest.main()
