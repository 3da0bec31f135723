"""The grader's own threads kept off the timing core (grader/sandbox/own_threads.py), and the cores
the CPU share gives them and the timing runs (cpu_share.CpuShare.grader_cores, timing_cpu)."""

import os
import subprocess
import sys
import threading
import unittest

from grader_tests.cgroup_fixtures import v2_tree
from grader_tests.cpu_share_fixtures import TreeCase
from grader.sandbox import own_threads
from grader.sandbox.cgroups import detect
from grader.sandbox.cpu_plan import TWO_TIMING_CORES_FROM
from grader.sandbox.cpu_share import CpuShare
from grader.sandbox.process import timing_core

CHILD_AFFINITY = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]


def affinity_of_every_thread() -> dict[int, set[int]]:
    return {int(tid): os.sched_getaffinity(int(tid)) for tid in os.listdir(own_threads.TASKS)}


class KeptTo(unittest.TestCase):
    def test_every_thread_and_what_they_start_keep_to_the_cores_and_are_as_before_after(self):
        before = os.sched_getaffinity(0)
        target = {min(before)}
        release = threading.Event()
        seen = {}

        def waiting():   # started before the block: it is moved too
            release.wait(30)
            seen["old"] = os.sched_getaffinity(0)

        old = threading.Thread(target=waiting)
        old.start()
        try:
            with own_threads.kept_to(target):
                self.assertEqual(set(map(frozenset, affinity_of_every_thread().values())), {frozenset(target)},
                                 "every thread of the process")
                new = threading.Thread(target=lambda: seen.setdefault("new", os.sched_getaffinity(0)))
                new.start()
                new.join()
                child = subprocess.run(CHILD_AFFINITY, capture_output=True, text=True, timeout=30, check=True)
                release.set()
                old.join()
            self.assertEqual((seen["old"], seen["new"]), (target, target))
            self.assertEqual(child.stdout.strip(), str(sorted(target)), "a program a thread starts inherits it")
            self.assertEqual(set(map(frozenset, affinity_of_every_thread().values())), {frozenset(before)})
        finally:
            release.set()
            old.join()
            own_threads.set_every_thread(before)

    def test_cores_it_may_not_have_leave_every_thread_as_it_was(self):
        before = affinity_of_every_thread()
        with own_threads.kept_to({os.cpu_count() + 64}):   # no such core
            self.assertEqual(affinity_of_every_thread(), before)
        self.assertEqual(affinity_of_every_thread(), before)

    def test_none_changes_nothing(self):
        before = affinity_of_every_thread()
        with own_threads.kept_to(None):
            self.assertEqual(affinity_of_every_thread(), before)


class Cores(TreeCase):
    def test_the_grader_keeps_to_the_student_cores_and_the_timing_runs_to_the_kept_core(self):
        mounts, fs = v2_tree(self.root, cpus=",".join(map(str, sorted(os.sched_getaffinity(0)))))
        share = CpuShare(detect(mounts, fs), fs=fs, name="g1-1")   # no cores given: this machine's own
        share.start(in_flight=2, timing=True)
        try:
            self.assertTrue(share.on, share.why_not)
            kept = share.plan.timing_core
            if kept is None:   # one core: nothing is kept, nobody is moved
                self.assertIsNone(share.grader_cores())
                self.assertEqual((share.timing_cpu(host=True), share.timing_cpu(host=False)), (timing_core(), None))
                return
            self.assertEqual(share.grader_cores(), set(share.plan.student_cores))
            self.assertNotIn(kept, share.grader_cores())
            self.assertNotIn(share.plan.device_core, share.grader_cores())
            self.assertEqual((share.timing_cpu(host=True), share.timing_cpu(host=False)), (kept, share.plan.device_core))
            # a second core for the device part from TWO_TIMING_CORES_FROM cores on (cpu_plan.py)
            self.assertEqual(share.plan.device_core != kept, len(share.plan.cores) >= TWO_TIMING_CORES_FROM)
        finally:
            share.close()

    def test_nobody_is_moved_without_a_share_or_on_cores_given_by_a_test(self):
        off = CpuShare.off("not root")
        self.assertIsNone(off.grader_cores())
        self.assertEqual((off.timing_cpu(host=True), off.timing_cpu(host=False)), (timing_core(), None))
        mounts, fs = v2_tree(self.root)
        given = self.share(mounts, fs, cores=range(4))
        given.start(in_flight=2, timing=True)
        try:
            self.assertEqual(given.plan.timing_core, 3)
            self.assertIsNone(given.grader_cores(), "made-up cores are not this machine's")
            self.assertEqual(given.timing_cpu(host=False), 3)
        finally:
            given.close()


if __name__ == "__main__":
    unittest.main()
