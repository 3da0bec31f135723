"""The CPU share on this machine's own cgroups (grader/sandbox/cpu_share.py), where the grader can write
them (root, a cgroup tree with the cpu controller; skipped elsewhere, saying why): a run that
spins many processes, each in a session of its own (so the kernel's autogroup would give each a
share of its own), is held to its student's quota, and a classmate's run beside it gets as much
CPU as an equal share gives it. Sandboxed where bubblewrap is here."""

import contextlib
import os
import threading
import unittest
from pathlib import Path

from grader.sandbox import cgroups
from grader.sandbox.cgroups import ROOT_NAME
from grader.sandbox.cpu_share import CpuShare
from grader.sandbox.process import run_process
from grader.sandbox.bubblewrap import Limits, Sandbox, View

SECONDS = 4.0
SPINNERS = 8
SPIN = 'while :; do :; done'
BURN = f'i=0; while [ $i -lt {SPINNERS} ]; do setsid sh -c "{SPIN}" & i=$((i+1)); done; {SPIN}'


def _share() -> tuple[CpuShare | None, str]:
    share = CpuShare.detect()
    if share.trees is None:
        return None, share.why_not
    cores = os.sched_getaffinity(0)
    share = CpuShare(share.trees, cores=cores)   # one core a student: the two below, on any machine
    share.start(in_flight=len(cores), timing=False)
    if not share.on:
        return None, share.why_not
    return share, ""


class RealQuota(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sandbox = Sandbox.detect()

    def setUp(self):
        self.share, why = _share()
        if self.share is None:
            self.skipTest(f"no writable cgroup tree with the cpu controller here: {why}")

    def tearDown(self):
        self.share.close()
        left = [p for tree in self.share.trees.all() for p in (tree / ROOT_NAME / self.share.name,) if p.exists()]
        self.assertEqual(left, [], "the grader's cgroups were not removed")

    def run_as(self, student: str, script: str, results: dict) -> None:
        sandbox, argv = self.sandbox, ["/bin/sh", "-c", script]
        if not sandbox.enabled:
            results[student] = run_process(argv, SECONDS, preexec=self.share.preexec(student))
            return
        with sandbox.run_user() as user, sandbox.seccomp_fds() as fds:
            results[student] = run_process(sandbox.command(argv, View(), user, fds), SECONDS,
                                           env=sandbox.environment(os.environ), pass_fds=fds,
                                           preexec=self.share.preexec(student, sandbox.preexec(Limits())))

    def spin(self, scripts: dict[str, str], quota: bool = True) -> tuple[dict[str, float], float]:
        """Runs `scripts` (student -> shell script) side by side for SECONDS, each student in its
        cgroup (without its quota: `quota` False); returns each one's CPU time and the window."""
        results = {}
        with contextlib.ExitStack() as stack:
            for name in scripts:
                stack.enter_context(self.share.student(name))
                if not quota:
                    stack.enter_context(self.share.unlimited(name))
            before = {name: self.share.seconds_of(name) for name in scripts}
            runs = [threading.Thread(target=self.run_as, args=(name, script, results))
                    for name, script in scripts.items()]
            for thread in runs:
                thread.start()
            for thread in runs:
                thread.join()
            used = {name: self.share.seconds_of(name) - before[name] for name in scripts}
        self.assertTrue(all(result.timed_out for result in results.values()), results)
        self.assertGreater(min(used.values()), 0.1, f"a run did not run at all, or nothing was measured: {used}")
        return used, max(result.seconds for result in results.values())

    def test_a_run_that_spins_many_sessions_is_held_to_its_quota(self):
        quota = self.share.plan.quota
        free, window = self.spin({"burner": BURN}, quota=False)
        if free["burner"] < 1.3 * quota * window:   # other work on the machine holds the cores: no quota to reach
            self.skipTest(f"the machine is too busy to tell: without its quota the burner got {free['burner']:.2f} "
                          f"CPU-s in {window:.1f} s, not much more than its {quota:g} core")
        used, window = self.spin({"burner": BURN})
        self.assertLessEqual(used["burner"], quota * window * 1.1 + 0.2,
                             f"the burner used {used['burner']:.2f} CPU-s in {window:.1f} s, over its {quota:g} core")

    def test_a_classmates_run_beside_it_gets_an_equal_share(self):
        used, window = self.spin({"burner": BURN, "victim": SPIN})
        # Equal weights: the victim's one process gets what the burner's nine get together (up to one core).
        self.assertGreaterEqual(used["victim"], 0.5 * used["burner"],
                                f"the victim got {used['victim']:.2f} CPU-s beside the burner's {used['burner']:.2f}")

    def test_the_cgroups_are_named_by_the_grader_and_opaque(self):
        with self.share.student("alice"):
            folders = self.share.group_of("alice").folders
            self.assertTrue(all(Path(f).parent.name == cgroups.own_name() for f in folders), folders)
            self.assertTrue(all(Path(f).name == "s1" for f in folders), folders)


if __name__ == "__main__":
    unittest.main()
