"""Library reductions refused by name (libraries.py): the compiler's listings parsed, each header
resolved to its library, the header the student used named, and CUB and Thrust found for hiding."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from grader_tests import helpers  # noqa: F401  (puts grading/ on sys.path)
from grader.judge.libraries import (CG_COLLECTIVES, CUB, THRUST, hidden_library_folders, library_folders,
                                    parse_dependencies, parse_include_tree, refusal_detail, refused_headers,
                                    refused_libraries, used_headers)
from grader.policy import Policy

ALL = (CUB, THRUST, CG_COLLECTIVES)


def make_tree(root: Path) -> dict[str, Path]:
    """A toolkit whose include/cccl holds CUB, Thrust and libcu++ (and an include/ that is a link
    into targets/, as NVIDIA's packages make it), cooperative groups, a distribution's copy of CUB,
    a folder named cub that is no CUB, and a link to the toolkit's CUB from elsewhere."""
    real = root / "toolkit" / "targets" / "x86_64-linux" / "include"
    cccl = real / "cccl"
    for name in ("cub/device", "thrust/detail", "cuda/std", "nv"):
        (cccl / name).mkdir(parents=True)
    (cccl / "cub" / "version.cuh").touch()
    (cccl / "thrust" / "version.h").touch()
    (real / "cooperative_groups" / "details").mkdir(parents=True)
    (real / "cooperative_groups" / "details" / "info.h").touch()
    (root / "toolkit" / "include").symlink_to(real)
    (root / "usr" / "include" / "cub").mkdir(parents=True)
    (root / "usr" / "include" / "cub" / "version.cuh").touch()
    (root / "project" / "cub").mkdir(parents=True)             # no version.cuh: not CUB
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "mycub").symlink_to(cccl / "cub")
    return {"include": root / "toolkit" / "include", "real": real, "cccl": cccl, "usr_cub": root / "usr" / "include" / "cub",
            "project": root / "project", "link": root / "elsewhere" / "mycub"}


class DependenciesTest(unittest.TestCase):
    def test_parses_rules_continuations_and_escapes_and_leaves_targets_out(self):
        text = ("lab.so : /src/lab.cu /usr/include/stdc-predef.h \\\n"
                "    /opt/my\\ headers/a.h /opt/x\\#y.h /opt/$$HOME.h \\\n"
                "    /src/lab.cu\n"
                "/opt/phony.h:\n")
        self.assertEqual(parse_dependencies(text), ["/src/lab.cu", "/usr/include/stdc-predef.h", "/opt/my headers/a.h",
                                                    "/opt/x#y.h", "/opt/$HOME.h"])

    def test_parses_the_include_tree_of_several_passes(self):
        text = ("warning: something\n. /a.h\n.. /b.h\n... /c.h\n. /d.h\n"
                "Multiple include guards may be useful for:\n/d.h\n. /a.h\n")
        self.assertEqual(parse_include_tree(text), [(1, "/a.h"), (2, "/b.h"), (3, "/c.h"), (1, "/d.h"), (1, "/a.h")])


class RefusalTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.paths = make_tree(Path(self.tmp.name))

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_spelling_of_a_cub_header_is_cub(self):
        include, cccl = self.paths["include"], self.paths["cccl"]
        listed = parse_dependencies(
            f"lab.so: /src/lab.cu {include}/cccl/cuda/std/atomic \\\n"
            f" {include}/cccl/thrust/../cub/device/device_reduce.cuh \\\n"   # through .. and the include/ link
            f" {self.paths['link']}/version.cuh {self.paths['usr_cub']}/util.cuh \\\n"
            f" {self.paths['project']}/cub/helper.h {cccl}/thrust/detail/config.h\n")
        self.assertEqual(refused_headers(listed, (CUB,)), ["cub/device/device_reduce.cuh", "cub/version.cuh", "cub/util.cuh"])
        self.assertEqual(refused_headers(listed, (CUB, THRUST)),
                         ["cub/device/device_reduce.cuh", "cub/version.cuh", "cub/util.cuh", "thrust/detail/config.h"])

    def test_libcu_and_cooperative_groups_h_are_never_refused(self):
        real = self.paths["real"]
        listed = [f"{real}/cooperative_groups.h", f"{real}/cooperative_groups/details/info.h",
                  f"{real}/cooperative_groups/memcpy_async.h", f"{self.paths['cccl']}/cuda/std/atomic",
                  f"{self.paths['cccl']}/nv/target", "relative/cub/version.cuh"]
        self.assertEqual(refused_headers(listed, ALL), [])

    def test_cooperative_groups_collectives_are_refused_with_their_implementation_files(self):
        real = self.paths["real"]
        listed = [f"{real}/cooperative_groups/reduce.h", f"{real}/cooperative_groups/details/coalesced_scan.h",
                  f"{real}/cooperative_groups/scan.h"]
        self.assertEqual(refused_headers(listed, (CG_COLLECTIVES,)),
                         ["cooperative_groups/reduce.h", "cooperative_groups/details/coalesced_scan.h",
                          "cooperative_groups/scan.h"])
        self.assertEqual(refused_headers(listed, (CUB, THRUST)), [])

    def test_names_the_header_the_student_used_not_what_the_library_includes(self):
        cccl, real = self.paths["cccl"], self.paths["real"]
        tree = parse_include_tree(
            f". {cccl}/cuda/std/atomic\n.. {cccl}/cuda/std/__config\n"
            f". {cccl}/cub/device/device_reduce.cuh\n.. {cccl}/cub/config.cuh\n"
            f".. {cccl}/cuda/std/cstdint\n... {cccl}/cub/version.cuh\n"      # CUB through libcu++: still CUB's own
            f".. {cccl}/thrust/detail/config.h\n"
            f". {real}/cooperative_groups.h\n"
            f". {real}/cooperative_groups/reduce.h\n.. {real}/cooperative_groups/details/reduce.h\n"
            f". {cccl}/thrust/detail/config.h\n")                          # already included: gcc lists it again
        self.assertEqual(used_headers(tree, ALL), ["cub/device/device_reduce.cuh", "cooperative_groups/reduce.h",
                                                   "thrust/detail/config.h"])
        self.assertEqual(used_headers(tree, (CUB,)), ["cub/device/device_reduce.cuh"])

    def test_the_verdict_names_the_header_and_the_rule(self):
        detail = refusal_detail(5, ["cub/device/device_reduce.cuh"], (CUB, THRUST))
        self.assertEqual(detail, "uses <cub/device/device_reduce.cuh>: CUB is a library reduction; lab 05 is your own "
                                 "reduction (policy [compile] allow_cccl)")
        detail = refusal_detail(9, ["cooperative_groups/reduce.h"], ALL)
        self.assertIn("cooperative groups' reduce and scan are library reductions", detail)
        self.assertIn("refuse_cg_collectives", detail)
        self.assertNotIn("CUB", detail)


class PolicyTest(unittest.TestCase):
    def test_cub_and_thrust_everywhere_cooperative_groups_collectives_in_labs_2_to_10(self):
        policy = Policy.load(None)
        self.assertEqual(refused_libraries(policy.compile, 1), (CUB, THRUST))
        for number in range(2, 11):
            self.assertEqual(refused_libraries(policy.compile, number), (CUB, THRUST, CG_COLLECTIVES), number)
        self.assertEqual(refused_libraries(policy.compile, 11), (CUB, THRUST))
        self.assertEqual(refused_libraries(policy.compile, 12), (CUB, THRUST))

    def test_allow_cccl_lifts_cub_and_thrust_and_the_list_sets_the_collectives(self):
        policy = Policy.from_dict({"compile": {"allow_cccl": True, "refuse_cg_collectives": [12]}})
        self.assertEqual(refused_libraries(policy.compile, 5), ())
        self.assertEqual(refused_libraries(policy.compile, 12), (CG_COLLECTIVES,))
        with self.assertRaises(Exception):
            Policy.from_dict({"compile": {"refuse_cg_collectives": "2-10"}})


class HiddenFoldersTest(unittest.TestCase):
    def test_finds_cub_and_thrust_folders_and_never_libcu_or_the_cccl_folder(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            include, cccl = paths["include"], paths["cccl"]
            dependencies = (f"probe.o: probe.cu {include}/cuda_runtime.h \\\n"
                            f" {include}/cccl/cub/version.cuh {include}/cccl/cuda/std/version \\\n"
                            f" {paths['usr_cub']}/version.cuh {include}/cccl/thrust/version.h\n")
            self.assertEqual(library_folders(dependencies), {cccl / "cub", cccl / "thrust", paths["usr_cub"]})

    def test_hides_until_the_compiler_finds_none(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            cccl = paths["cccl"]
            # The compiler finds the first copy not hidden, as include paths in order would.
            copies = [cccl / "cub" / "version.cuh", paths["usr_cub"] / "version.cuh"]
            calls = []

            def probe(hidden):
                calls.append(hidden)
                shown = [path for path in copies if not any(h in path.parents for h in hidden)]
                return f"probe.o: probe.cu {shown[0]}\n" if shown else "probe.o: probe.cu\n"

            hidden = hidden_library_folders(probe, (paths["include"] / "cccl" / "cub",))
            self.assertEqual(set(hidden), {cccl / "cub", paths["usr_cub"]})
            self.assertEqual(len(calls), 2)

    def test_refuses_when_a_copy_cannot_be_hidden(self):
        with tempfile.TemporaryDirectory() as folder:
            paths = make_tree(Path(folder))
            stubborn = f"probe.o: {paths['usr_cub']}/version.cuh\n"
            with self.assertRaises(RuntimeError):
                hidden_library_folders(lambda hidden: stubborn, ())


if __name__ == "__main__":
    unittest.main()
