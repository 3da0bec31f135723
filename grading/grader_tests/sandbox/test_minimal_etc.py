"""What a run's minimal /etc holds (minimal_etc.py), on a made-up /etc: the loader's cache and
configuration, includes followed and links resolved, and a user database that names no real user."""

import shutil
import stat
import tempfile
import unittest
from pathlib import Path

from grader.sandbox.minimal_etc import MinimalEtc, loader_files, write_user_database


class TestMinimalEtc(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="etc-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.etc = self.tmp / "etc"
        (self.etc / "ld.so.conf.d").mkdir(parents=True)
        (self.etc / "alternatives").mkdir()

    def write(self, relative: str, text: str) -> Path:
        path = self.etc / relative
        path.write_text(text, encoding="utf-8")
        return path

    def test_the_loader_files_and_what_their_includes_name(self):
        self.write("ld.so.cache", "cache")
        self.write("ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n# include /etc/passwd\n")
        self.write("ld.so.conf.d/libc.conf", "/usr/local/lib\n")
        # A link (resolved to its file); a relative include, from the folder of the file that names it.
        cuda = self.write("alternatives/cuda.conf", "/usr/local/cuda/lib64\ninclude nested/*.conf\n")
        (self.etc / "ld.so.conf.d/988_cuda.conf").symlink_to("../alternatives/cuda.conf")
        (self.etc / "ld.so.conf.d/nested").mkdir()
        nested = self.write("ld.so.conf.d/nested/x.conf", "/opt/x/lib\ninclude /srv/outside.conf ../../../outside.conf\n")
        (self.tmp / "outside.conf").write_text("/home\n", encoding="utf-8")   # not under /etc: never bound
        self.write("ld.so.conf.d/notes.txt", "not a .conf")
        self.write("passwd", "root:x:0:0:root:/root:/bin/bash\n")
        self.write("hostname", "grader-7\n")
        files = dict((inside, source) for source, inside in loader_files(self.etc))
        self.assertEqual(files, {Path("/etc/ld.so.cache"): self.etc / "ld.so.cache",
                                 Path("/etc/ld.so.conf"): self.etc / "ld.so.conf",
                                 Path("/etc/ld.so.conf.d/libc.conf"): self.etc / "ld.so.conf.d/libc.conf",
                                 Path("/etc/ld.so.conf.d/988_cuda.conf"): cuda,
                                 Path("/etc/ld.so.conf.d/nested/x.conf"): nested})

    def test_a_machine_without_loader_configuration_gets_none(self):
        self.assertEqual(loader_files(self.etc), [])

    def test_the_user_database_names_root_and_the_sandbox_users_only(self):
        folder = self.tmp / "generated"
        folder.mkdir()
        written = write_user_database(folder, [65001, 65000, 65534])
        self.assertEqual([path.name for path in written], ["passwd", "group", "nsswitch.conf"])
        passwd = (folder / "passwd").read_text(encoding="ascii").splitlines()
        self.assertEqual([line.split(":")[2] for line in passwd], ["0", "65000", "65001", "65534"])
        self.assertTrue(all(stat.S_IMODE(path.stat().st_mode) == 0o644 for path in written))
        machine = set(Path("/etc/passwd").read_text(encoding="utf-8", errors="replace").splitlines()) \
            if Path("/etc/passwd").is_file() else set()
        self.assertFalse(machine & set(passwd), "a line of the machine's passwd: check_class.py would call it a leak")
        etc = MinimalEtc.build(folder, [65000])
        self.assertIn((folder / "passwd", Path("/etc/passwd")), etc.files)

    def test_a_compile_gets_the_loader_s_files_and_no_user_database(self):
        self.write("ld.so.cache", "cache")
        self.write("ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
        self.write("ld.so.conf.d/libc.conf", "/usr/local/lib\n")
        folder = self.tmp / "generated"
        folder.mkdir()
        etc = MinimalEtc.build(folder, [65000], self.etc)
        run = {inside for _, inside in etc.seen("minimal")}
        compile_ = {inside for _, inside in etc.seen("loader")}
        self.assertEqual(run - compile_, {Path("/etc/passwd"), Path("/etc/group"), Path("/etc/nsswitch.conf")})
        self.assertEqual(compile_, {Path("/etc/ld.so.cache"), Path("/etc/ld.so.conf"), Path("/etc/ld.so.conf.d/libc.conf"),
                                    Path("/etc/alternatives")})

    def test_the_alternatives_links_come_along(self):
        # /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-13.0 on a toolkit from packages:
        # without the folder, compute-sanitizer run by that path did not start (exit 127).
        (self.etc / "alternatives" / "cuda").symlink_to("/usr/local/cuda-13.0")
        etc = MinimalEtc.build(None, [], self.etc)
        self.assertIn((self.etc / "alternatives", Path("/etc/alternatives")), etc.files)
        shutil.rmtree(self.etc / "alternatives")
        self.assertEqual(MinimalEtc.build(None, [], self.etc).files, ())


if __name__ == "__main__":
    unittest.main()
