"""Which NVIDIA device nodes and driver files a sandbox of a GPU run gets: those of its own GPU.

CUDA_VISIBLE_DEVICES is no fence: student code can unset it. With every /dev/nvidia* node bound, a
run graded on GPU 0 could fill GPUs 1 to 7, where classmates are graded (`--gpus`). As
libnvidia-container does for a container (src/nvc_mount.c), a sandbox gets its GPU's node
/dev/nvidiaN alone, plus the shared nodes nvidiactl, nvidia-uvm (CUDA fails without it) and
nvidia-uvm-tools (libnvidia-container gives it to every CUDA container), and a tmpfs over
/proc/driver/nvidia that holds only that GPU's gpus/<bus id>/ folder, `version`, `registry` and a
copy of `params` with ModifyDeviceFiles: 0 (the driver library then does not try to make the nodes
it was not given). The CUDA runtime sees one device: CUDA_VISIBLE_DEVICES=0.

Which GPU: the PCI bus id the trusted checker reports for the grader's device (it honours the
grader's CUDA_VISIBLE_DEVICES, so each `--gpus` worker names its own), found among
/proc/driver/nvidia/gpus/<bus id>/ whose `information` gives "Device Minor: N". When that cannot be
determined (no /proc/driver/nvidia, a MIG instance, no such node), every node is bound, as before,
and the sandbox's description says so.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

DEV = Path("/dev")
DRIVER_PROC = Path("/proc/driver/nvidia")
NVIDIA_MAJOR = 195                     # the character-device major of /dev/nvidiaN and nvidiactl
SHARED_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools")
REQUIRED_NODES = ("nvidiactl", "nvidia-uvm")
DRIVER_FILES = ("version", "registry")  # copied as they are; `params` is rewritten
BUS_ID = re.compile(r"(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])")
DEVICE_MINOR = re.compile(r"^Device Minor:\s*(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class GpuView:
    """What of the NVIDIA driver one sandbox gets: (source on the machine, path in the sandbox) pairs."""
    nodes: tuple[tuple[Path, Path], ...]         # device nodes (and /dev/nvidia-caps when every node is bound)
    driver_files: tuple[tuple[Path, Path], ...]  # under /proc/driver/nvidia; none: the machine's is left as it is
    isolated: bool                               # only its own GPU: CUDA_VISIBLE_DEVICES=0 inside
    note: str                                    # for the sandbox's description

    def mounts(self) -> list[str]:
        args = []
        for source, target in self.nodes:
            args += ["--dev-bind", str(source), str(target)]
        if self.isolated:
            args += ["--perms", "0555", "--tmpfs", str(DRIVER_PROC)]
            folders = sorted({parent for _, target in self.driver_files for parent in target.parents
                              if DRIVER_PROC in parent.parents})
            for folder in folders:
                args += ["--dir", str(folder)]
            for source, target in self.driver_files:
                args += ["--ro-bind", str(source), str(target)]
        return args


def bus_id_key(text: str) -> tuple[int, int, int, int] | None:
    """(domain, bus, device, function) of a PCI bus id in any of the spellings the driver and CUDA use:
    0000:3b:00.0, 00000000:3B:00.0, 3b:00.0."""
    match = BUS_ID.fullmatch(text.strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return int(domain or "0", 16), int(bus, 16), int(device, 16), int(function)


def _is_node(path: Path) -> bool:
    """A character device (or, in a test's made-up tree, a plain file)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISREG(mode)


def every_node(reason: str, dev: Path = DEV) -> GpuView:
    """Every /dev/nvidia* node and /dev/nvidia-caps: the fallback when the GPU cannot be told apart."""
    nodes = []
    if dev.is_dir():
        for name in sorted(os.listdir(dev)):
            path = dev / name
            if name.startswith("nvidia") and (_is_node(path) or (name == "nvidia-caps" and path.is_dir())):
                nodes.append((path, DEV / name))
    return GpuView(tuple(nodes), (), False, f"GPU: every device node ({reason})")


def own_node(bus_id: str, generated: Path | None, dev: Path = DEV, driver: Path = DRIVER_PROC,
             visible_devices: str = "") -> GpuView:
    """The nodes and driver files of the GPU at `bus_id` alone, or every node (with why) when that GPU
    cannot be identified. `generated`: a folder to write the rewritten `params` into (None: left out)."""
    def fallback(why: str) -> GpuView:
        return every_node(f"its GPU could not be identified: {why}", dev)

    if "MIG-" in visible_devices:
        return fallback("a MIG instance")
    wanted = bus_id_key(bus_id)
    if wanted is None:
        return fallback(f"no PCI bus id ({bus_id!r})")
    gpus = driver / "gpus"
    if not gpus.is_dir():
        return fallback(f"no {gpus}")
    folders = [entry for entry in sorted(gpus.iterdir()) if bus_id_key(entry.name) == wanted]
    if len(folders) != 1:
        return fallback(f"{len(folders)} entries of {gpus} for {bus_id}")
    try:
        minor = DEVICE_MINOR.search((folders[0] / "information").read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        return fallback(str(exc))
    if not minor:
        return fallback(f"no 'Device Minor' in {folders[0] / 'information'}")
    number = int(minor.group(1))
    node = dev / f"nvidia{number}"
    if not _is_node(node):
        return fallback(f"no {node}")
    rdev = os.stat(node).st_rdev
    if stat.S_ISCHR(os.stat(node).st_mode) and (os.major(rdev), os.minor(rdev)) != (NVIDIA_MAJOR, number):
        return fallback(f"{node} is device {os.major(rdev)}:{os.minor(rdev)}")
    missing = [name for name in REQUIRED_NODES if not _is_node(dev / name)]
    if missing:
        return fallback("no " + ", ".join(str(dev / name) for name in missing))
    nodes = [(node, DEV / node.name)] + [(dev / name, DEV / name) for name in SHARED_NODES if _is_node(dev / name)]
    files = [(folders[0], DRIVER_PROC / "gpus" / folders[0].name)]
    files += [(driver / name, DRIVER_PROC / name) for name in DRIVER_FILES if (driver / name).is_file()]
    if generated is not None and (driver / "params").is_file():
        params = generated / "nvidia-params"
        text = (driver / "params").read_text(encoding="utf-8", errors="replace")
        params.write_text(re.sub(r"^ModifyDeviceFiles: 1$", "ModifyDeviceFiles: 0", text, flags=re.MULTILINE),
                          encoding="utf-8")
        params.chmod(0o444)
        files.append((params, DRIVER_PROC / "params"))
    return GpuView(tuple(nodes), tuple(files), True, f"GPU: its own device node only (/dev/nvidia{number}, {bus_id})")
