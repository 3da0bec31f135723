"""The uid pool of the sandbox (run_users.py): a uid per run, never two runs on one uid, whichever
process or thread leases it, and no process left of a uid that is handed out."""

import os
import pwd
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from grader_tests.helpers import GRADING
from grader.sandbox.run_users import (LOCK_FOLDER, RUN_UIDS, SHARED_UID, RunUser, UidPool, describe_users,
                                      processes_of, uids_described)
from grader.sandbox.bubblewrap import Sandbox


class TestUidPool(unittest.TestCase):
    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(prefix="uid-pool-test-")) / "locks"
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.folder.parent)]))

    def test_the_range_is_below_65536_and_nobody_is_not_in_it(self):
        self.assertLessEqual(RUN_UIDS.stop, 65535)
        self.assertNotIn(65534, RUN_UIDS)
        self.assertGreaterEqual(len(RUN_UIDS), 256, "enough for every run of a busy host at once")

    def test_a_description_names_the_uids_its_runs_had(self):
        # examples/check_class.py looks for leftovers of the uids a grading's records name.
        self.assertEqual(uids_described(f"bubblewrap 0.8.0, {describe_users(RUN_UIDS)}, pid/net/ipc/uts namespaces"),
                         set(RUN_UIDS))
        self.assertEqual(uids_described(f"bubblewrap 0.8.0, {describe_users(None, 'no uid range: x')}, pid"),
                         {SHARED_UID})
        self.assertEqual(uids_described("UNSANDBOXED: not root"), set())

    def test_concurrent_leases_in_one_process_get_different_uids(self):
        pool = UidPool(RUN_UIDS, self.folder)
        held, lock, everyone = [], threading.Lock(), threading.Barrier(16)

        def lease():
            with pool.lease() as user:
                with lock:
                    held.append(user.uid)
                everyone.wait(timeout=10)   # all 16 hold theirs at once
        threads = [threading.Thread(target=lease) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(len(set(held)), 16, held)
        self.assertLessEqual(set(held), set(RUN_UIDS))

    def test_another_process_never_gets_a_uid_this_one_holds(self):
        two = range(RUN_UIDS.start, RUN_UIDS.start + 2)
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom grader.sandbox.run_users import UidPool\n"
             f"with UidPool(range({two.start}, {two.stop}), Path({str(self.folder)!r})).lease() as user:\n"
             "    print(user.uid, flush=True)\n    sys.stdin.read()\n"],
            cwd=GRADING, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            other = int(holder.stdout.readline())
            pool = UidPool(two, self.folder)
            with pool.lease() as user:
                self.assertEqual({user.uid, other}, set(two))
                with self.assertRaisesRegex(RuntimeError, "no free sandbox uid"):
                    with pool.lease(wait_s=0.2):
                        pass
        finally:
            holder.stdin.close()
            holder.wait(timeout=10)
            holder.stdout.close()
        with pool.lease(wait_s=5) as user:   # released when its holder ended
            self.assertIn(user.uid, two)

    def test_a_released_uid_is_leased_again(self):
        pool = UidPool(range(RUN_UIDS.start, RUN_UIDS.start + 1), self.folder)
        for _ in range(3):
            with pool.lease(wait_s=1) as user:
                self.assertEqual(user.uid, RUN_UIDS.start)

    def test_uids_with_a_name_are_never_used(self):
        mine = os.geteuid()
        self.assertTrue(pwd.getpwuid(mine).pw_name)
        with self.assertRaisesRegex(OSError, "has a name"):
            UidPool(range(mine, mine + 1), self.folder)

    def test_the_lock_folder_is_private(self):
        self.folder.mkdir(mode=0o777)
        os.chmod(self.folder, 0o777)
        UidPool(RUN_UIDS, self.folder)
        self.assertEqual(stat.S_IMODE(self.folder.stat().st_mode), 0o700)
        link = self.folder.parent / "link"
        link.symlink_to(self.folder)
        with self.assertRaisesRegex(OSError, "is not a folder"):
            UidPool(RUN_UIDS, link)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to start a process as another uid")
    def test_a_leftover_process_of_a_uid_is_killed_before_it_is_handed_out(self):
        # The machine's own lock folder: the uid is leased as the grader would, so no run holds it.
        pool = UidPool(RUN_UIDS, LOCK_FOLDER)
        with pool.lease() as user:
            leftover = subprocess.Popen(["sleep", "60"], user=user.uid, group=user.gid)
        self.addCleanup(leftover.kill)
        self.assertIn(leftover.pid, processes_of({user.uid}))
        start = time.monotonic()
        with UidPool(range(user.uid, user.uid + 1), LOCK_FOLDER).lease(wait_s=30) as again:
            self.assertEqual(again.uid, user.uid)
            self.assertEqual(leftover.wait(timeout=5), -9)
            self.assertEqual(processes_of({user.uid}), [])
        self.assertLess(time.monotonic() - start, 5)

    @unittest.skipUnless(os.geteuid() == 0, "needs root to start a process as another uid")
    def test_a_runs_processes_in_sessions_of_their_own_are_killed_as_the_run_ends(self):
        pool = UidPool(RUN_UIDS, LOCK_FOLDER)
        with pool.lease() as user:
            outside = subprocess.Popen(["sleep", "60"], user=user.uid, group=user.gid, start_new_session=True)
            self.addCleanup(outside.kill)
            with UidPool(range(user.uid + 1, user.uid + 2), LOCK_FOLDER).lease(wait_s=30) as other:
                classmate = subprocess.Popen(["sleep", "60"], user=other.uid, group=other.gid)
                self.addCleanup(classmate.kill)
                Sandbox(enabled=True, users=pool).kill_run(user)
                self.assertEqual(outside.wait(timeout=5), -9)
                self.assertIsNone(classmate.poll(), "another run's process was killed")
                # Where runs share one uid (no range), or run unsandboxed, nothing is the run's alone.
                Sandbox(enabled=True, users=None).kill_run(RunUser(other.uid, other.gid))
                Sandbox(enabled=False, users=pool).kill_run(RunUser(other.uid, other.gid))
                time.sleep(0.2)
                self.assertIsNone(classmate.poll(), "a shared or unsandboxed uid's processes were killed")


if __name__ == "__main__":
    unittest.main()
