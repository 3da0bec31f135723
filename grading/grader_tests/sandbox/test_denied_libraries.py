"""Which library files the sandbox masks (denied_libraries.py), on a made-up tree: every file a
denied name leads to, links resolved; never the CUDA runtime, the driver or the tools' libraries."""

import shutil
import tempfile
import unittest
from pathlib import Path

from grader.sandbox.denied_libraries import DENIED_LIBRARIES, denied_library_files, is_denied

KEPT = ("libcudart.so.13", "libcudart.so", "libcudart_static.a", "libcuda.so.1", "libcuda.so.580.95.05",
        "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libnvidia-nvvm.so.4", "libcupti.so.13",
        "libnvToolsExt.so.1", "libnvtx3interop.so.1", "libcudadevrt.a", "libsanitizer-collection.so",
        "libstdc++.so.6", "libc.so.6", "libcuda_wrapper.so")
DENIED = ("libcublas.so.13", "libcublasLt.so.13.0.2.14", "libcublas_static.a", "libnvblas.so.13", "libcufft.so.12",
          "libcufftw.so.12", "libcurand.so.10", "libcusparse.so.12", "libcusparseLt.so.0", "libcusolver.so.12",
          "libcusolverMg.so.12", "libnppc.so.13", "libnppist.so.13", "libnvjpeg.so.13", "libcudnn.so.9",
          "libcudnn_ops.so.9", "libcutensor.so.2", "libnccl.so.2", "libnvrtc.so.13", "libnvrtc-builtins.so.13.0",
          "libnvJitLink.so.13", "libnvvm.so.4", "libcufile.so.0")


class TestDeniedLibraries(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="denied-test-")).resolve()
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def file(self, relative: str) -> Path:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x7fELF")
        return path

    def test_the_names_the_issue_lists_are_denied_and_the_runtime_and_driver_are_not(self):
        self.assertEqual([name for name in DENIED if not is_denied(name)], [])
        self.assertEqual([name for name in KEPT if is_denied(name)], [])
        self.assertTrue(all(pattern.startswith("lib") for pattern in DENIED_LIBRARIES))

    def test_every_file_a_denied_name_leads_to_is_found_links_resolved(self):
        toolkit = self.tmp / "usr/local/cuda-13.0/targets/x86_64-linux/lib"
        real = [self.file(f"usr/local/cuda-13.0/targets/x86_64-linux/lib/{name}")
                for name in ("libcublas.so.13.1.0.3", "libcublasLt.so.13.1.0.3", "libnvrtc.so.13.0.88")]
        (toolkit / "libcublas.so.13").symlink_to("libcublas.so.13.1.0.3")
        (toolkit / "libcublas.so").symlink_to("libcublas.so.13")
        (self.tmp / "usr/local/cuda").symlink_to("cuda-13.0")   # a link to a folder: its target is walked once
        site = self.file("usr/lib/python3/dist-packages/nvidia/cublas/lib/libcublas.so.12")
        opt = self.file("opt/vendor/lib/libnppist.so.12")
        # A file by another name that a denied name links to, and a link by another name to a denied file.
        hidden_copy = self.file("usr/share/misc/blob.bin")
        (self.tmp / "usr/lib/libcufft.so.12").symlink_to(hidden_copy)
        (self.tmp / "usr/lib/innocent.so").symlink_to(real[0])
        kept = [self.file(f"usr/local/cuda-13.0/targets/x86_64-linux/lib/{name}") for name in KEPT]
        (self.tmp / "usr/lib/libnvrtc.so.1").symlink_to(self.tmp / "nowhere.so")   # dangling: nothing to mask
        found = denied_library_files((str(self.tmp / "usr"), str(self.tmp / "opt"), str(self.tmp / "etc")))
        self.assertEqual(set(found), {*real, site, opt, hidden_copy})
        self.assertFalse(set(found) & set(kept))
        self.assertEqual(len(found), len(set(found)))

    def test_a_root_inside_another_is_walked_once_and_a_missing_one_is_skipped(self):
        library = self.file("opt/cuda/lib64/libcusolver.so.12")
        found = denied_library_files((str(self.tmp / "opt"), str(self.tmp / "opt/cuda"), str(self.tmp / "missing")))
        self.assertEqual(found, (library,))


if __name__ == "__main__":
    unittest.main()
