"""The CPU share per student on made-up cgroup trees, v1 and v2 (grader/sandbox/cgroups.py, cpu_share.py):
which layout is used, the cgroups each grader makes and what it writes there (quotas, weights,
cpusets), joining one before exec, the cleanup of a grader's own cgroups, and trees that refuse."""

import errno
import os
import sys
import unittest
from pathlib import Path

from grader_tests.cgroup_fixtures import v1_tree, v2_tree
from grader_tests.cpu_share_fixtures import TreeCase
from grader.sandbox.cgroups import ROOT_NAME, Trees, cpu_list, detect, parse_cpu_list
from grader.sandbox.cpu_plan import Plan
from grader.sandbox.cpu_share import DEVICE_TIMING, TIMING, CpuShare
from grader.sandbox.process import run_process
from grader.run.workers import core_slices

PRINT_PID = [sys.executable, "-c", "import os; print(os.getpid())"]


class Layouts(TreeCase):
    def test_v2_where_a_cgroup2_mount_offers_the_cpu_controller(self):
        mounts, fs = v2_tree(self.root)
        self.assertEqual(detect(mounts, fs), Trees(2, self.root, self.root, self.root, self.root, freezer=self.root))
        self.assertEqual(detect(mounts, fs, "0::/\n"), Trees(2, self.root, self.root, self.root, self.root, self.root,
                                                             self.root))

    def test_the_subtrees_go_beside_the_graders_own_cgroup(self):
        mounts, fs = v2_tree(self.root)
        slurm = "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n"
        self.assertEqual(detect(mounts, fs, slurm).cpu, self.root / "system.slice/slurmstepd.scope/job_7/step_0/user")
        self.assertEqual(detect(mounts, fs, "0::/grader.service\n").cpu, self.root)
        self.assertEqual(detect(mounts, fs, "0::/../elsewhere\n").cpu, self.root)
        mounts, fs = v1_tree(Path(self.tmp.name) / "v1", together=False)
        trees = detect(mounts, fs, "3:cpuset:/\n2:cpuacct:/a/b\n1:cpu:/a/b\n0::/\n")
        self.assertEqual((trees.cpu.name, trees.usage.name, trees.cpuset.name), ("a", "a", "cpuset"))

    def test_the_graders_own_cgroup_in_the_cpu_tree_is_known_for_a_starved_run(self):
        mounts, fs = v2_tree(self.root)
        slurm = "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n"
        self.assertEqual(detect(mounts, fs, slurm).own, self.root / "system.slice/slurmstepd.scope/job_7/step_0/user/task_0")
        self.assertEqual(detect(mounts, fs, "0::/\n").own, self.root)
        self.assertIsNone(detect(mounts, fs, "0::/../elsewhere\n").own)
        self.assertIsNone(detect(mounts, fs).own)   # not known: nothing is moved
        mounts, fs = v1_tree(Path(self.tmp.name) / "v1", together=False)
        trees = detect(mounts, fs, "3:cpuset:/\n2:cpuacct:/x\n1:cpu:/a/b\n0::/\n")
        self.assertEqual(trees.own, Path(self.tmp.name) / "v1" / "cpu" / "a" / "b")

    def test_v1_beside_a_cgroup2_without_controllers_as_on_the_project_machine(self):
        mounts, fs = v1_tree(self.root, together=False)
        self.assertEqual(detect(mounts, fs), Trees(1, self.root / "cpu", self.root / "cpuacct", self.root / "cpuset",
                                                   freezer=self.root / "freezer"))
        mounts, fs = v1_tree(Path(self.tmp.name) / "together")
        trees = detect(mounts, fs)
        self.assertEqual((trees.cpu, trees.usage), (trees.cpu, trees.cpu))
        self.assertEqual(len(trees.all()), 3)
        mounts, fs = v1_tree(Path(self.tmp.name) / "no freezer", freezer=False)
        self.assertIsNone(detect(mounts, fs).freezer)

    def test_no_tree_read_only_or_no_cpu_controller_says_why(self):
        mounts, fs = v2_tree(self.root)
        self.assertIn("read-only", detect(mounts.replace(" rw,", " ro,"), fs))
        (self.root / "cgroup.controllers").write_text("memory pids\n", encoding="ascii")
        self.assertEqual(detect(mounts, fs), "no cgroup tree with the cpu controller is mounted")
        mounts, fs = v1_tree(Path(self.tmp.name) / "v1")
        self.assertIn("read-only", detect(mounts.replace("rw,nosuid,relatime,cpu,", "ro,nosuid,relatime,cpu,"), fs))
        self.assertEqual(detect("proc /proc proc rw 0 0\n", fs), "no cgroup tree with the cpu controller is mounted")

    def test_core_lists(self):
        self.assertEqual(cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8")
        self.assertEqual(parse_cpu_list("0-2,5,7-8\n"), {0, 1, 2, 5, 7, 8})
        self.assertEqual(parse_cpu_list(""), set())


class Plans(unittest.TestCase):
    def test_two_cores_kept_for_timing_and_the_rest_shared_by_the_students_in_flight(self):
        plan = Plan.of(range(16), 4, True)
        self.assertEqual(plan, Plan(tuple(range(16)), 15, tuple(range(14)), 3.5, 14))
        self.assertEqual((plan.timing_core, plan.device_core), (15, 14), "the host part's core, the device part's")
        self.assertEqual(Plan.of(range(16), 4, False), Plan(tuple(range(16)), None, tuple(range(16)), 4.0))

    def test_below_eight_cores_one_timing_core_for_both_parts(self):
        plan = Plan.of(range(7), 2, True)
        self.assertEqual(plan, Plan(tuple(range(7)), 6, tuple(range(6)), 3.0))
        self.assertEqual(plan.device_core, 6)

    def test_at_least_one_core_each_and_none_kept_with_one_core(self):
        self.assertEqual(Plan.of({0, 1}, 4, False).quota, 1.0)
        self.assertEqual(Plan.of({0, 1}, 4, True), Plan((0, 1), 1, (0,), 1.0))
        self.assertEqual(Plan.of({3}, 4, True), Plan((3,), None, (3,), 1.0))
        self.assertEqual(Plan.of({3}, 4, True).device_core, None)
        self.assertEqual(Plan.of(range(8), 1, True).quota, 6.0, "one student in flight has every student core")

    def test_the_timing_cores_smt_siblings_are_kept_free_while_any_core_is_left(self):
        pairs = lambda core: {core % 4, core % 4 + 4}   # noqa: E731  (0,4) (1,5) (2,6) (3,7)
        plan = Plan.of(range(8), 2, True, siblings_of=pairs)
        self.assertEqual((plan.timing_core, plan.device_timing_core, plan.student_cores), (7, 6, (0, 1, 4, 5)))
        self.assertEqual(Plan.of({3, 7}, 2, True, siblings_of=pairs).student_cores, (3,))


class WorkerSlices(unittest.TestCase):
    def test_each_gpu_worker_gets_whole_physical_cores_of_its_own_or_every_core(self):
        self.assertEqual(core_slices(range(16), 2), [set(range(8)), set(range(8, 16))])
        pairs = lambda core: {core % 8, core % 8 + 8}   # noqa: E731  SMT: (0,8) (1,9) ...
        self.assertEqual(core_slices(range(16), 2, pairs), [{0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}])
        self.assertEqual(core_slices(range(5), 2), [{0, 1, 2}, {3, 4}])
        self.assertEqual(core_slices(range(3), 2), [None, None], "a timing core and a student core each, or no slices")
        plans = [Plan.of(cores, 4, True, siblings_of=pairs) for cores in core_slices(range(16), 2, pairs)]
        self.assertEqual([plan.timing_core for plan in plans], [11, 15], "each worker keeps a timing core of its own")
        self.assertTrue(set(plans[0].student_cores).isdisjoint({15, 7}), "nor a sibling of the other's")


class Subtrees(TreeCase):
    def test_the_cores_are_the_graders_within_the_trees_cpuset(self):
        mounts, fs = v2_tree(self.root, cpus="2-3")
        share = self.share(mounts, fs, cores=range(8))
        share.start(in_flight=1, timing=True)
        self.assertEqual(share.plan.cores, (2, 3))
        share.close()

    def test_v2_controllers_quota_weight_and_cpusets(self):
        mounts, fs = v2_tree(self.root)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertTrue(share.on, share.why_not)
        shared, mine = self.root / ROOT_NAME, self.root / ROOT_NAME / "g1-1"
        for folder in (self.root, shared, mine):   # the root may hold processes; the other two hold none
            self.assertEqual(fs.written(folder / "cgroup.subtree_control"), ["+cpu", "+cpuset"], folder)
        self.assertEqual(fs.written(mine / "cpuset.cpus"), ["0-3"])
        self.assertEqual(fs.written(mine / "timing" / "cpuset.cpus"), ["3"])
        self.assertEqual(fs.written(mine / "timing" / "cpu.max"), ["max 100000"])
        with share.student("amy"):
            amy = share.group_of("amy").folders[0]
            self.assertEqual(amy.name, "s1", "a student's cgroup has an opaque name: /sys shows it to every run")
            self.assertEqual(fs.written(amy / "cpu.max"), ["150000 100000"])   # 3 student cores / 2 in flight
            self.assertEqual(fs.written(amy / "cpuset.cpus"), ["0-2"])
            self.assertEqual(fs.written(amy / "cpu.weight"), ["100"])
        self.assertFalse(amy.exists())
        self.assertEqual(share.describe(), "CPU: a cgroup v2 share per student (1.5 core(s) each of cores 0-2; core 3 "
                                           "kept for timing)")
        share.close()
        self.assertFalse(shared.exists())

    def test_v2_controllers_are_enabled_on_the_way_down_to_the_graders_parent_and_not_in_its_own(self):
        mounts, fs = v2_tree(self.root)
        service = self.root / "system.slice" / "grader.service"
        fs.mkdir(self.root / "system.slice")
        fs.mkdir(service)
        (service / "cgroup.procs").write_text(f"{os.getpid()}\n", encoding="ascii")   # the grader is there
        trees = detect(mounts, fs, "0::/system.slice/grader.service\n")
        share = CpuShare(trees, fs=fs, cores=set(range(4)), name="g1-1")
        share.start(in_flight=2, timing=True)
        self.assertTrue(share.on, share.why_not)
        for folder in (self.root, self.root / "system.slice", self.root / "system.slice" / ROOT_NAME):
            self.assertEqual(fs.written(folder / "cgroup.subtree_control"), ["+cpu", "+cpuset"], folder)
        self.assertEqual(fs.written(service / "cgroup.subtree_control"), [])
        self.assertTrue((self.root / "system.slice" / ROOT_NAME / "g1-1" / "timing").is_dir())
        share.close()
        self.assertFalse((self.root / "system.slice" / ROOT_NAME).exists())
        self.assertEqual(share.trees.cpu, self.root / "system.slice")

    def test_v1_quota_shares_and_cpusets_with_their_memory_nodes(self):
        mounts, fs = v1_tree(self.root, cpus="0-15", together=False)
        share = self.share(mounts, fs, cores=range(16))
        share.start(in_flight=4, timing=True)
        self.assertTrue(share.on, share.why_not)
        with share.student("amy"):
            cpu, usage, cpuset, freezer = share.group_of("amy").folders
            self.assertEqual([p.parent.parent.parent.name for p in (cpu, usage, cpuset, freezer)],
                             ["cpu", "cpuacct", "cpuset", "freezer"])
            self.assertEqual(fs.written(cpu / "cpu.cfs_quota_us"), ["350000"])
            self.assertEqual(fs.written(cpu / "cpu.cfs_period_us"), ["100000"])
            self.assertEqual(fs.written(cpuset / "cpuset.cpus"), ["0-13"])
            self.assertEqual(fs.written(cpuset / "cpuset.mems"), ["0"], "a v1 cpuset takes no process without nodes")
        mine = self.root / "cpu" / ROOT_NAME / "g1-1"
        self.assertEqual(fs.written(mine / "timing" / "cpu.cfs_quota_us"), ["-1"])
        self.assertEqual(fs.written(mine / "cpu.shares"), [str(1024 * 16)], "the grader weighs as its 16 cores")
        self.assertEqual(fs.written(self.root / "cpuset" / ROOT_NAME / "g1-1" / "timing" / "cpuset.cpus"), ["15"])
        self.assertEqual(fs.written(self.root / "cpuset" / ROOT_NAME / "g1-1" / "device-timing" / "cpuset.cpus"), ["14"])
        self.assertEqual(fs.written(mine / "device-timing" / "cpu.cfs_quota_us"), ["-1"])
        share.close()
        self.assertEqual([p for p in self.root.rglob(ROOT_NAME)], [])

    def test_the_paired_group_has_the_timing_core_no_quota_and_a_freezer_v1_and_v2(self):
        for version, make, state, thawed in ((1, v1_tree, "freezer.state", "THAWED"), (2, v2_tree, "cgroup.freeze", "0")):
            with self.subTest(version=version):
                root = Path(self.tmp.name) / f"v{version}"
                mounts, fs = make(root, cpus="0-7")
                share = self.share(mounts, fs, cores=range(8))
                self.assertIsNone(share.paired)
                self.assertIn("no CPU share", share.paired_why_not)
                share.start(in_flight=2, timing=True)
                paired = share.paired
                self.assertIsNotNone(paired, share.paired_why_not)
                self.assertEqual(paired.freeze, share.trees.freezer / ROOT_NAME / "g1-1" / "paired")
                self.assertIn(paired.freeze, paired.folders)
                cpuset = share.trees.cpuset / ROOT_NAME / "g1-1" / "paired" / "cpuset.cpus"
                self.assertEqual(fs.written(cpuset), ["7"], "the timing core, as the timing group's")
                quota = share.trees.cpu / ROOT_NAME / "g1-1" / "paired" / ("cpu.max" if version == 2 else "cpu.cfs_quota_us")
                self.assertEqual(fs.written(quota), ["max 100000" if version == 2 else "-1"])
                (paired.freeze / state).write_text("FROZEN\n" if version == 1 else "1\n", encoding="ascii")
                share.thaw_paired()
                self.assertEqual(fs.written(paired.freeze / state)[-1], thawed)
                share.close()
                self.assertEqual([p for p in root.rglob(ROOT_NAME)], [])

    def test_without_a_freezer_there_is_no_paired_group_and_it_says_why(self):
        mounts, fs = v1_tree(self.root, freezer=False)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertTrue(share.on, share.why_not)
        self.assertIsNone(share.paired)
        self.assertEqual(share.paired_why_not, "no cgroup freezer is mounted")
        share.thaw_paired()   # nothing to thaw: no error
        share.close()
        mounts, fs = v2_tree(Path(self.tmp.name) / "old kernel")
        fs.files = {name: text for name, text in fs.files.items() if not name.startswith("cgroup.freeze")}
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertIsNone(share.paired)
        self.assertIn("has no freezer", share.paired_why_not)
        self.assertEqual([p.name for p in (share.trees.cpu / ROOT_NAME / "g1-1").iterdir() if p.is_dir()], ["timing"])
        share.close()

    def test_the_device_parts_timing_runs_have_a_second_core_and_a_group_of_their_own(self):
        mounts, fs = v2_tree(self.root, cpus="0-15")
        share = self.share(mounts, fs, cores=range(16))
        share.start(in_flight=4, timing=True)
        self.assertTrue(share.on, share.why_not)
        self.assertEqual((share.timing_cpu(host=True), share.timing_cpu(host=False)), (15, 14))
        self.assertFalse(share.parts_share_a_core)
        self.assertEqual(share.describe(), "CPU: a cgroup v2 share per student (3.5 core(s) each of cores 0-13; cores "
                                           "15 and 14 kept for timing (host part, device part))")
        mine = self.root / ROOT_NAME / "g1-1"
        self.assertEqual(fs.written(mine / "device-timing" / "cpuset.cpus"), ["14"])
        device = run_process(PRINT_PID, 20, preexec=share.preexec(DEVICE_TIMING))
        self.assertEqual((mine / "device-timing" / "cgroup.procs").read_text(encoding="ascii").strip(),
                         device.stdout.strip())
        (mine / "timing" / "cpu.stat").write_text("usage_usec 2000000\n", encoding="ascii")
        (mine / "device-timing" / "cpu.stat").write_text("usage_usec 500000\n", encoding="ascii")
        self.assertEqual((share.timing_seconds(host=True), share.timing_seconds(host=False)), (2.0, 0.5),
                         "each part's turn counts its own group's CPU time")
        share.close()
        few = self.share(*v2_tree(Path(self.tmp.name) / "few", cpus="0-3"), cores=range(4))
        few.start(in_flight=2, timing=True)
        self.assertEqual((few.timing_cpu(host=True), few.timing_cpu(host=False), few.parts_share_a_core), (3, 3, True))
        few.close()

    def test_a_run_joins_its_cgroup_in_every_tree_before_exec(self):
        mounts, fs = v1_tree(self.root, together=False)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=False)
        with share.student("amy"):
            result = run_process(PRINT_PID, 20, preexec=share.preexec("amy"))
            for folder in share.group_of("amy").folders:
                self.assertEqual((folder / "cgroup.procs").read_text(encoding="ascii").strip(), result.stdout.strip())
            timing = run_process(PRINT_PID, 20, preexec=share.preexec(TIMING))
            timing_procs = share.trees.cpuset / ROOT_NAME / "g1-1" / "timing" / "cgroup.procs"
            self.assertEqual(timing_procs.read_text(encoding="ascii").strip(), timing.stdout.strip())
            self.assertIsNone(share.preexec("nobody"), "a run of no student in flight stays where the grader is")
            for folder in share.group_of("amy").folders:   # the process ended: the kernel would show it no more
                (folder / "cgroup.procs").write_text("", encoding="ascii")
        share.close()

    def test_a_run_that_cannot_join_does_not_start_and_says_so(self):
        mounts, fs = v2_tree(self.root)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=False)
        with share.student("amy"):
            preexec = share.preexec("amy")
            (share.group_of("amy").folders[0] / "cgroup.procs").unlink()
            result = run_process(PRINT_PID, 20, preexec=preexec)
            self.assertEqual(result.returncode, 127)
            self.assertIn("cannot start", result.stderr)
        share.close()

    def test_the_quota_is_lifted_for_a_run_alone_and_set_again(self):
        mounts, fs = v2_tree(self.root)
        share = self.share(mounts, fs)
        share.start(in_flight=4, timing=False)
        with share.student("amy"):
            cpu_max = share.group_of("amy").folders[0] / "cpu.max"
            with share.unlimited("amy"):
                self.assertEqual(cpu_max.read_text(encoding="ascii").strip(), "max 100000")
            self.assertEqual(fs.written(cpu_max), ["100000 100000", "max 100000", "100000 100000"])
        share.close()


class Failures(TreeCase):
    def test_a_namespace_root_with_processes_refuses_controllers_and_the_share_is_off_leaving_nothing(self):
        mounts, fs = v2_tree(self.root, namespaced=True)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertFalse(share.on)
        self.assertIn("cgroup.subtree_control", share.why_not)
        self.assertIn("busy", share.why_not)
        self.assertTrue(share.describe().startswith("CPU: no cgroup per student ("), share.describe())
        self.assertFalse((self.root / ROOT_NAME).exists())
        with share.student("amy") as problem:
            self.assertEqual((problem, share.preexec("amy")), ("", None))

    def test_a_tree_that_refuses_writes_turns_the_share_off(self):
        mounts, fs = v1_tree(self.root)
        fs.refuse["cpu.shares"] = errno.EROFS
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=False)
        self.assertFalse(share.on)
        self.assertIn("Read-only file system", share.why_not)
        self.assertEqual([p for p in self.root.rglob(ROOT_NAME)], [])

    def test_no_cpuset_controller_in_v2_keeps_no_core_and_still_shares(self):
        mounts, fs = v2_tree(self.root)
        (self.root / "cgroup.controllers").write_text("cpu memory\n", encoding="ascii")
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertTrue(share.on, share.why_not)
        self.assertIsNone(share.trees.cpuset)
        self.assertEqual((share.plan.timing_core, share.plan.quota), (None, 2.0))
        self.assertEqual(share.describe(), "CPU: a cgroup v2 share per student (2 core(s) each of cores 0-3)")
        share.close()

    def test_a_cpuset_controller_that_cannot_be_enabled_keeps_no_core(self):
        mounts, fs = v2_tree(self.root)
        original = fs.write

        def no_cpuset(path, text):
            if text == "+cpuset":
                raise OSError(errno.EINVAL, "Invalid argument")
            original(path, text)
        fs.write = no_cpuset
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)
        self.assertTrue(share.on, share.why_not)
        self.assertEqual((share.plan.timing_core, share.plan.quota), (None, 2.0))
        share.close()

    def test_not_root_or_nothing_mounted_says_why(self):
        self.assertEqual(CpuShare.off("not root").describe(), "CPU: no cgroup per student (not root)")
        if os.geteuid() != 0:
            self.assertEqual(CpuShare.detect().why_not, "not root")


if __name__ == "__main__":
    unittest.main()
