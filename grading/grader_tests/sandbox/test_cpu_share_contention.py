"""The CPU share beside other runs, on made-up cgroup trees (grader/sandbox/cpu_share.py): a starved run
moved to the grader's own cgroup, the evidence of held cores, and two graders on one tree that never
meet, a dead grader's leftovers swept."""

import errno
import os
import subprocess
import threading
import unittest
import unittest.mock
from pathlib import Path

from grader_tests.cgroup_fixtures import v1_tree, v2_tree
from grader_tests.cpu_share_fixtures import TreeCase
from grader.sandbox import cgroups
from grader.sandbox.cgroups import ROOT_NAME, detect
from grader.sandbox.cpu_share import CpuShare


class Rescue(TreeCase):
    """A killed run its own share starves is moved into the grader's own cgroup (grader/sandbox/ending.py)."""

    def test_a_starved_process_goes_to_the_graders_own_cgroup_of_the_cpu_tree(self):
        for layout, own in ((v2_tree, "0::/\n"), (v1_tree, "1:cpu,cpuacct:/\n0::/\n")):
            with self.subTest(layout.__name__):
                mounts, fs = layout(Path(self.tmp.name) / layout.__name__)
                share = CpuShare(detect(mounts, fs, own), fs=fs, cores=range(4), name="g1-1")
                share.start(in_flight=2, timing=False)
                self.assertEqual(share.rescue(4242), "")
                self.assertEqual(fs.written(share.trees.own / "cgroup.procs"), ["4242"])
                self.assertEqual(share.trees.own, share.trees.cpu)   # the grader at the root: beside its subtree
                share.close()

    def test_without_a_known_own_cgroup_or_a_share_it_says_why_and_moves_nothing(self):
        mounts, fs = v2_tree(self.root)
        share = CpuShare(detect(mounts, fs), fs=fs, cores=range(4), name="g1-1")
        self.assertIn("not known", share.rescue(4242))
        self.assertIn("not known", CpuShare.off("not root").rescue(4242))
        self.assertEqual(fs.written(self.root / "cgroup.procs"), [])

    def test_a_refused_move_says_why(self):
        mounts, fs = v2_tree(self.root)
        share = CpuShare(detect(mounts, fs, "0::/\n"), fs=fs, cores=range(4), name="g1-1")
        fs.refuse["cgroup.procs"] = errno.EPERM
        self.assertIn("cgroup.procs", share.rescue(4242))


class Evidence(TreeCase):
    def test_the_other_students_cpu_time_ended_students_included_and_the_timing_group_not(self):
        mounts, fs = v2_tree(self.root)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=True)

        def used(student, seconds):
            stat = share.group_of(student).usage / "cpu.stat"
            stat.write_text(f"usage_usec {round(seconds * 1e6)}\n", encoding="ascii")

        with share.student("amy"):
            with share.student("ben"):
                used("ben", 3.0)
                used("amy", 100.0)
                (share.trees.cpu / ROOT_NAME / "g1-1" / "timing" / "cpu.stat").write_text("usage_usec 9000000\n")
                self.assertEqual(share.others_seconds("amy"), 3.0)
            self.assertEqual(share.others_seconds("amy"), 3.0, "ben's time stays counted once his cgroup is gone")
            self.assertEqual(share.others_seconds("ben"), 103.0)
        share.close()

    def test_held_means_at_least_half_of_the_runs_own_share_measured_or_a_classmate_beside_it_unmeasured(self):
        mounts, fs = v2_tree(self.root)
        share = self.share(mounts, fs)
        share.start(in_flight=2, timing=False)   # 2 cores each
        self.assertIsNone(share.held({"ben"}, 19.9, 20.0))
        self.assertEqual(share.held({"ben"}, 20.0, 20.0),
                         "they used 20.0 CPU-seconds in its 20.0 s; its own share: 2 core(s)")
        self.assertIsNone(share.held(set(), 0.0, 20.0))
        self.assertIsNone(share.held(set(), None, 20.0), "nobody beside it and nothing measured: its own doing")
        self.assertIn("another student's runs ran beside it", share.held({"ben"}, None, 20.0))
        share.close()


class Collisions(TreeCase):
    def test_two_graders_on_one_tree_have_their_own_cgroups_and_leave_each_other_alone(self):
        mounts, fs = v2_tree(self.root)
        first, second = self.share(mounts, fs, name="g10-1"), self.share(mounts, fs, name="g11-1")
        started = [threading.Thread(target=s.start, args=(2, True)) for s in (first, second)]
        for thread in started:
            thread.start()
        for thread in started:
            thread.join()
        self.assertTrue(first.on and second.on, (first.why_not, second.why_not))
        with first.student("amy"), second.student("amy"):
            self.assertNotEqual(first.group_of("amy").folders, second.group_of("amy").folders)
        first.close()
        self.assertTrue((self.root / ROOT_NAME / "g11-1" / "timing").is_dir(), "the other grader's cgroups stay")
        self.assertTrue((self.root / ROOT_NAME).is_dir(), "the shared folder stays while another grader uses it")
        second.close()
        self.assertFalse((self.root / ROOT_NAME).exists())

    def test_a_grader_that_starts_while_another_ends_and_removes_the_shared_folder_still_gets_its_share(self):
        mounts, fs = v2_tree(self.root)
        for turn in range(20):
            ending, starting = self.share(mounts, fs, name=f"g{turn}-1"), self.share(mounts, fs, name=f"g{turn}-2")
            ending.start(2, True)
            threads = [threading.Thread(target=ending.close), threading.Thread(target=starting.start, args=(2, True))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertTrue(starting.on, (turn, starting.why_not))
            self.assertTrue((self.root / ROOT_NAME / starting.name / "timing").is_dir())
            starting.close()
            self.assertFalse((self.root / ROOT_NAME).exists())

    def test_a_cgroup_removed_by_another_grader_while_it_is_removed_counts_as_removed(self):
        mounts, fs = v2_tree(self.root)
        folder = self.root / ROOT_NAME / "g1-1" / "timing"
        folder.mkdir(parents=True)
        real = Path.iterdir

        def vanishing(path):   # the owner (or another sweeper) removes it between the look and the listing
            if path == folder:
                folder.rmdir()
            return real(path)

        with unittest.mock.patch.object(Path, "iterdir", vanishing):
            self.assertTrue(cgroups.remove(fs, folder))
        self.assertFalse(folder.exists())

    def test_a_dead_graders_leftovers_go_at_the_next_start_a_live_graders_stay(self):
        mounts, fs = v2_tree(self.root)
        shared = self.root / ROOT_NAME
        sleeper = subprocess.Popen(["sleep", "60"])
        threading.Thread(target=sleeper.wait, daemon=True).start()   # reaped once killed
        live = cgroups.own_name()            # this test's process: a grader that is running
        reused = f"g{os.getpid()}-1"         # its pid, another start time: a grader that is gone
        for name in (live, reused, "g999999999-5"):
            fs.mkdir(shared) if not shared.exists() else None
            fs.mkdir(shared / name)
            fs.mkdir(shared / name / "s1")
        (shared / "g999999999-5" / "s1" / "cgroup.procs").write_text(f"{sleeper.pid}\n", encoding="ascii")
        share = self.share(mounts, fs, name="g12-1")
        share.start(in_flight=2, timing=False)
        self.assertEqual(sorted(share.swept), sorted([reused, "g999999999-5"]))
        self.assertEqual(sleeper.wait(5), -9, "what still ran in a dead grader's cgroup was killed")
        self.assertEqual(sorted(p.name for p in shared.iterdir() if p.is_dir()), sorted([live, "g12-1"]))
        share.close()
        self.assertTrue((shared / live / "s1").is_dir())


if __name__ == "__main__":
    unittest.main()
