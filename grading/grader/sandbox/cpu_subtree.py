"""The folders and files of a grader's cgroup subtree, v1's and v2's (for cpu_share.py).

CpuShare decides which groups there are, for whom, on which cores and with which quota; this
writes them into the trees (cgroups.py): the shared folder and the grader's own, with the weight
of the cores they stand for, v2's controllers for their children and v1's cpusets; and each leaf,
with its weight, its quota and its cpuset. Kept apart so that the share's policy reads without the
two layouts' file names.

SubtreeFiles is not used alone: it is CpuShare's base class, and works on the share's `trees`,
`fs`, `name`, `plan` and `_wanted`. Where v2 cannot enable cpuset for a folder's children, it turns
the share's cpuset off (its `trees` and `plan`): no core can then be kept from the students.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from . import cgroups
from .cgroups import PERIOD_US, ROOT_NAME, CgroupError
from .cpu_plan import Plan


@dataclass(frozen=True)
class Group:
    """A leaf of the subtree: a student's, the timing runs' or the paired one."""
    name: str
    folders: tuple[Path, ...]   # one per tree
    usage: Path | None          # where its CPU time is read


class SubtreeFiles:
    """Writes the cgroups of CpuShare (its base class; see the module's docstring)."""

    def _folders(self, *parts: str) -> tuple[Path, ...]:
        return tuple(tree.joinpath(ROOT_NAME, *parts) for tree in self.trees.all())

    def _make_subtree(self, cores: set[int]) -> None:
        """The shared folder and this grader's, with controllers for their children (v2), the weight of
        the cores they stand for beside the machine's other processes, and (v1) their cpusets."""
        trees, fs = self.trees, self.fs
        machine = os.cpu_count() or len(cores)
        if trees.version == 2:   # each level's controllers come from its parent's subtree_control
            levels = [trees.mount]
            for part in trees.cpu.relative_to(trees.mount).parts:
                levels.append(levels[-1] / part)
            for folder in levels:
                self._enable(folder)
        for level, width in (((), machine), ((self.name,), len(cores))):
            for folder in self._folders(*level):
                cgroups.make(fs, folder)
            cpu = trees.cpu.joinpath(ROOT_NAME, *level)
            if trees.version == 2:
                if level:
                    self._enable(cpu.parent)
                cgroups.write(fs, cpu / "cpu.weight", str(min(cgroups.V2_WEIGHT_MAX, cgroups.V2_WEIGHT * width)))
            else:
                cgroups.write(fs, cpu / "cpu.shares", str(min(cgroups.V1_SHARES_MAX, cgroups.V1_SHARES * width)))
                if trees.cpuset is not None:   # v1 trees do not change on the way
                    folder = trees.cpuset.joinpath(ROOT_NAME, *level)
                    parent_cpus = fs.read(folder.parent / "cpuset.cpus").strip()
                    wanted = parent_cpus if not level else cgroups.cpu_list(cores)
                    self._v1_cpuset(folder, wanted)
        if trees.version == 2:
            mine = trees.cpu / ROOT_NAME / self.name
            self._enable(mine)
            if self.trees.cpuset is not None:
                cgroups.write(fs, mine / "cpuset.cpus", cgroups.cpu_list(cores))

    def _enable(self, folder: Path) -> None:
        """v2: the cpu controller, and cpuset where there is one, for the children of `folder` (a
        cgroup that holds no process, or the root). Without cpuset no core is kept (describe() says)."""
        try:
            enabled = self.fs.read(folder / "cgroup.subtree_control").split()
        except OSError:
            enabled = []
        if "cpu" not in enabled:
            cgroups.write(self.fs, folder / "cgroup.subtree_control", "+cpu")
        if self.trees.cpuset is None or "cpuset" in enabled:
            return
        try:
            cgroups.write(self.fs, folder / "cgroup.subtree_control", "+cpuset")
        except CgroupError:
            self.trees = dataclasses.replace(self.trees, cpuset=None)
            self.plan = Plan.of(self.plan.cores, self._wanted[0], False)

    def _v1_cpuset(self, folder: Path, cpus: str) -> None:
        """v1: a cpuset takes no process before its cores and memory nodes are set (the parent's nodes)."""
        cgroups.write(self.fs, folder / "cpuset.cpus", cpus)
        cgroups.write(self.fs, folder / "cpuset.mems", self.fs.read(folder.parent / "cpuset.mems").strip())

    def _make(self, name: str, cores, quota: float | None) -> Group:
        """A leaf of this grader's subtree: its quota (None: none), the default weight, its cpuset."""
        folders = self._folders(self.name, name)
        try:
            return self._fill(name, folders, cores, quota)
        except CgroupError:
            for folder in folders:
                cgroups.remove(self.fs, folder)
            raise

    def _fill(self, name: str, folders: tuple[Path, ...], cores, quota: float | None) -> Group:
        trees, fs = self.trees, self.fs
        for folder in folders:
            cgroups.make(fs, folder)
        cpu = trees.cpu / ROOT_NAME / self.name / name
        if trees.version == 2:
            cgroups.write(fs, cpu / "cpu.weight", str(cgroups.V2_WEIGHT))
        else:
            cgroups.write(fs, cpu / "cpu.cfs_period_us", str(PERIOD_US))
            cgroups.write(fs, cpu / "cpu.shares", str(cgroups.V1_SHARES))
        self._set_quota(name, quota)
        if trees.cpuset is not None:
            folder = trees.cpuset / ROOT_NAME / self.name / name
            if trees.version == 2:
                cgroups.write(fs, folder / "cpuset.cpus", cgroups.cpu_list(cores))
            else:
                self._v1_cpuset(folder, cgroups.cpu_list(cores))
        usage = trees.usage / ROOT_NAME / self.name / name if trees.usage is not None else None
        return Group(name, folders, usage)

    def _set_quota(self, name: str, quota: float | None) -> None:
        cpu = self.trees.cpu / ROOT_NAME / self.name / name
        if self.trees.version == 2:
            value = "max" if quota is None else str(round(quota * PERIOD_US))
            cgroups.write(self.fs, cpu / "cpu.max", f"{value} {PERIOD_US}")
        else:
            cgroups.write(self.fs, cpu / "cpu.cfs_quota_us", "-1" if quota is None else str(round(quota * PERIOD_US)))
