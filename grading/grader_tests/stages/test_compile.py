"""Real graded compiles through the Toolchain (nvcc; in the bubblewrap sandbox where this machine has
it): honest labs and toolkit headers compile in the compile's view, a file outside that view
(`#include`, `.incbin`) is named as such, library reductions are refused by the header's name whichever
pass includes them and however the path is spelled, and diagnostics in toolkit headers are shown."""

from __future__ import annotations

import shutil
import tempfile
import unittest
from pathlib import Path

from grader_tests.helpers import REPO
from grader.report.diagnostics import first_error, public_folders, student_diagnostics
from grader.judge.libraries import CG_COLLECTIVES, CUB, THRUST
from grader.manifest import Lab, Manifest
from grader.sandbox.bubblewrap import Limits, Sandbox
from grader.stages.toolchain import Toolchain
from grader.sandbox.toolkit import toolkit_of

# Two device passes, as a graded compile has (the build's manifest lists the same kind of line).
FLAGS = ["-std=c++17", "-O3", "-shared", "-Xcompiler=-fPIC,-fvisibility=hidden", "--cudart=shared",
         "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"]
LAB01 = Lab("01_host_sum", "host_sum.cpp", "lab01_host_sum")
LAB09 = Lab("09_shuffle", "shuffle.cu", "lab09_shuffle")
LAB11 = Lab("11_single_pass", "single_pass.cu", "lab11_single_pass")
KERNEL = "__global__ void kernel(int* out) { *out = 1; }\n"


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.is_file() else None


class CompileCase(unittest.TestCase):
    sandbox: Sandbox

    @classmethod
    def setUpClass(cls):
        cls.nvcc = find_nvcc()
        if cls.nvcc is None:
            raise unittest.SkipTest("nvcc not found (PATH, /usr/local/cuda/bin)")
        # The toolkit's own CUB, wherever this toolkit keeps it (nvcc on PATH may be a wrapper script).
        cls.cub = next((folder / "cub" for folder in toolkit_of(cls.nvcc).include_dirs
                        if (folder / "cub" / "version.cuh").is_file()), None)
        if cls.cub is None:
            raise unittest.SkipTest(f"no cub/version.cuh in the include folders of {cls.nvcc}")
        cls.manifest = Manifest(source_dir=REPO, binary_dir=REPO / "build", reference_dir=None, nvcc=cls.nvcc,
                                module_flags=FLAGS, include_dirs=[str(REPO / "common" / "include")], labs=[])

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="compile-test-")).resolve()
        self.tmp.chmod(0o755)   # the sandbox reads the source as "others"
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def compile(self, text: str, lab: Lab = LAB09, refuse=(CUB, THRUST, CG_COLLECTIVES), tools: Toolchain | None = None):
        source = self.tmp / "src" / lab.file
        source.parent.mkdir(exist_ok=True)
        source.parent.chmod(0o755)
        source.write_text(text, encoding="utf-8")
        source.chmod(0o644)
        module = self.tmp / "modules" / lab.module_file
        module.parent.mkdir(exist_ok=True)
        run = (tools or self.tools).compile("student", lab, source, module, 300, refuse)
        shown = student_diagnostics(run.process.stdout + "\n" + run.process.stderr, str(source), f"labs/{lab.folder}/x",
                                    public_folders(self.nvcc, self.manifest.include_dirs))
        return run, module.is_file(), shown


class TestSandboxedCompiles(CompileCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sandbox = Sandbox.detect(hidden=[REPO])
        if not cls.sandbox.enabled:
            raise unittest.SkipTest(f"bubblewrap sandbox unavailable here: {cls.sandbox.reason}")
        cls.tools = Toolchain(cls.manifest, cls.sandbox, Limits())

    def test_cub_and_thrust_are_hidden_and_libcu_is_not(self):
        hidden = self.tools.hidden_libraries()
        self.assertTrue(hidden, "CUB and Thrust should be hidden from a graded compile")
        self.assertTrue(all(path.name in ("cub", "thrust") for path in hidden), hidden)

    def test_toolkit_headers_compile(self):
        run, built, shown = self.compile(
            "#include <cooperative_groups.h>\n#include <cuda/std/atomic>\n#include <cuda/std/cstdint>\n"
            "#include <cuda/atomic>\n#include <cuda/barrier>\n#include <cuda_fp16.h>\n"
            "namespace cg = cooperative_groups;\n"
            "__global__ void kernel(int* out) {\n"
            "  cg::thread_block block = cg::this_thread_block();\n"
            "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
            "  int value = warp.shfl_down(static_cast<int>(threadIdx.x), 1);\n"
            "  block.sync();\n"
            "  cuda::atomic_ref<int, cuda::thread_scope_device>(*out).fetch_add(value);\n"
            "}\n")
        self.assertEqual(run.process.returncode, 0, shown)
        self.assertEqual(run.refused, ())
        self.assertTrue(built, "an honest module must be copied out")

    def test_honest_labs_compile_in_the_compile_view(self):
        for lab, path in ((LAB01, "solutions/01_host_sum/host_sum.cpp"), (LAB11, "solutions/11_single_pass/single_pass.cu")):
            run, built, shown = self.compile((REPO / path).read_text(encoding="utf-8"), lab, refuse=(CUB, THRUST))
            self.assertEqual((run.process.returncode, run.refused, run.outside), (0, (), ()), shown)
            self.assertTrue(built, path)

    def test_an_include_outside_the_view_is_named(self):
        solution = str(REPO / "solutions" / "01_host_sum" / "host_sum.cpp")
        for name in ("/etc/hostname", "/etc/passwd", "/root/.bashrc", solution):
            run, built, shown = self.compile(f'#include "{name}"\n' + KERNEL)
            self.assertFalse(built)
            self.assertEqual(run.outside, (name,), shown)
            self.assertIn(f"{name}: No such file or directory", shown, "the compiler's own line, in the student's file")
        run, _, shown = self.compile("#include <../../solutions/01_host_sum/host_sum.cpp>\n" + KERNEL)
        self.assertEqual(run.outside, ("../../solutions/01_host_sum/host_sum.cpp",), shown)

    def test_an_incbin_outside_the_view_is_named(self):
        solution = str(REPO / "solutions" / "01_host_sum" / "host_sum.cpp")
        for lab, tail in ((LAB01, ""), (LAB09, KERNEL)):
            run, built, shown = self.compile(f'asm(".section .rodata\\n.incbin \\"/etc/passwd\\"\\n'
                                             f'.incbin \\"{solution}\\"\\n.text");\n' + tail, lab)
            self.assertFalse(built)
            self.assertEqual(run.outside, ("/etc/passwd", solution), run.process.stderr)
            self.assertNotIn("Assembler messages", shown, "located in the assembler's temporary file: not quoted")
        run, built, _ = self.compile('asm(".include \\"/etc/hostname\\"");\n', LAB01)
        self.assertEqual((built, run.outside), (False, ("/etc/hostname",)))

    def test_an_incbin_of_the_view_s_own_files_compiles(self):
        # What .incbin can still read is public: a toolkit header, a system header, the loader's cache.
        header = toolkit_of(self.nvcc).include_dirs[0] / "cuda_fp16.h"
        run, built, shown = self.compile(f'asm(".section .rodata\\n.incbin \\"{header}\\"\\n'
                                         '.incbin \\"/usr/include/stdio.h\\"\\n.incbin \\"/etc/ld.so.cache\\"\\n'
                                         '.text");\n', LAB01)
        self.assertEqual((run.process.returncode, run.outside), (0, ()), shown)
        self.assertTrue(built)

    def test_a_missing_header_is_a_plain_compile_error(self):
        run, built, shown = self.compile('#include "helpers.h"\n#include <cuda/std/atomics>\n' + KERNEL)
        self.assertFalse(built)
        self.assertEqual(run.outside, ())
        self.assertIn("helpers.h: No such file or directory", shown)

    def test_cub_is_refused_by_name(self):
        run, built, shown = self.compile("#include <cub/device/device_reduce.cuh>\n" + KERNEL)
        self.assertEqual(run.refused, ("cub/device/device_reduce.cuh",))
        self.assertFalse(built)
        self.assertIn("cub/device/device_reduce.cuh", shown, "the hidden header is why the compile failed")

    def test_a_header_of_the_device_pass_only_is_refused(self):
        run, built, _ = self.compile("#ifdef __CUDA_ARCH__\n#include <cub/warp/warp_reduce.cuh>\n#endif\n" + KERNEL)
        self.assertEqual(run.refused, ("cub/warp/warp_reduce.cuh",))
        self.assertFalse(built)

    def test_a_header_of_the_host_pass_only_is_refused(self):
        run, built, _ = self.compile("#ifndef __CUDA_ARCH__\n#include <thrust/version.h>\n#endif\n" + KERNEL)
        self.assertEqual(run.refused, ("thrust/version.h",))
        self.assertFalse(built)

    def test_an_absolute_path_through_another_library_is_refused(self):
        through = self.cub.parent / "thrust" if (self.cub.parent / "thrust").is_dir() else self.cub
        run, built, _ = self.compile(f'#include "{through}/../cub/version.cuh"\n' + KERNEL)
        self.assertEqual(run.refused, ("cub/version.cuh",))
        self.assertFalse(built)

    def test_a_path_through_a_link_is_refused(self):
        # A machine may hold a link to the toolkit's CUB somewhere the compiler looks (here: a
        # folder the harness include path shows).
        shown = self.tmp / "include"
        (shown / "vendor").mkdir(parents=True)
        (shown / "vendor" / "fast").symlink_to(self.cub)
        shown.chmod(0o755)
        (shown / "vendor").chmod(0o755)
        manifest = Manifest(**{**self.manifest.__dict__, "include_dirs": [*self.manifest.include_dirs, str(shown)]})
        tools = Toolchain(manifest, self.sandbox, Limits())
        run, built, _ = self.compile("#include <vendor/fast/version.cuh>\n" + KERNEL, tools=tools)
        self.assertEqual(run.refused, ("cub/version.cuh",))
        self.assertFalse(built)

    def test_cooperative_groups_reduce_is_refused_where_the_policy_says_and_allowed_elsewhere(self):
        text = ("#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                "namespace cg = cooperative_groups;\n"
                "__global__ void kernel(const int* in, int* out) {\n"
                "  auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
                "  const int sum = cg::reduce(warp, in[threadIdx.x], cg::plus<int>());\n"
                "  if (warp.thread_rank() == 0) atomicAdd(out, sum);\n"
                "}\n")
        run, built, shown = self.compile(text, LAB09)
        self.assertEqual(run.refused, ("cooperative_groups/reduce.h",), shown)
        self.assertFalse(built)
        run, built, shown = self.compile(text, LAB11, refuse=(CUB, THRUST))
        self.assertEqual((run.process.returncode, run.refused), (0, ()), shown)
        self.assertTrue(built)

    def test_an_sm90_only_include_of_cooperative_groups_reduce_is_refused(self):
        run, _, _ = self.compile("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
                                 "#include <cooperative_groups/reduce.h>\n#endif\n" + KERNEL)
        self.assertEqual(run.refused, ("cooperative_groups/reduce.h",))

    def test_a_has_include_guard_compiles_without_the_library(self):
        run, built, shown = self.compile("#if __has_include(<cub/version.cuh>)\n#error CUB is in reach\n#endif\n" + KERNEL)
        self.assertEqual((run.process.returncode, run.refused), (0, ()), shown)
        self.assertTrue(built)

    def test_allow_cccl_compiles_cub(self):
        tools = Toolchain(self.manifest, self.sandbox, Limits(), allow_cccl=True)
        self.assertEqual(tools.hidden_libraries(), ())
        run, built, shown = self.compile("#include <cub/version.cuh>\n" + KERNEL, refuse=(), tools=tools)
        self.assertEqual((run.process.returncode, run.refused), (0, ()), shown)
        self.assertTrue(built)

    def test_an_error_in_a_toolkit_header_is_shown_and_passwd_is_not(self):
        run, built, shown = self.compile(
            "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
            "__global__ void kernel() { auto tile = cg::tiled_partition<33>(cg::this_thread_block()); }\n")
        self.assertFalse(built)
        self.assertIn("cooperative_groups.h", first_error(shown), shown)
        self.assertIn("Size must be one of", shown)
        self.assertIn("labs/09_shuffle/x", shown, "the instantiation's place in the student's file")
        run, built, shown = self.compile('#line 1 "/usr/local/cuda/include/../../../../etc/passwd"\n'
                                         "int x = ;\n#include \"/etc/passwd\"\n")
        self.assertFalse(built)
        self.assertNotIn("root:", shown)
        self.assertNotIn("/etc/passwd", shown)
        self.assertRegex(shown, r"\d+ diagnostic line\(s\) located in other files are not shown")


class TestUnsandboxedCompiles(CompileCase):
    """Without a sandbox nothing can be hidden: the refusal by name alone keeps a library out."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tools = Toolchain(cls.manifest, Sandbox(False, "test: unsandboxed"), Limits())

    def test_a_library_header_that_compiles_is_still_refused_and_no_module_comes_out(self):
        run, built, _ = self.compile("#ifndef __CUDA_ARCH__\n#include <thrust/version.h>\n#endif\n" + KERNEL)
        self.assertEqual(run.process.returncode, 0)
        self.assertEqual(run.refused, ("thrust/version.h",))
        self.assertFalse(built)


if __name__ == "__main__":
    unittest.main()
