"""The profiling command's parsing of ncu's CSV and its unit conversions (no GPU, no ncu)."""
import unittest

from tools import profile_lab

NCU_CSV = '''==PROF== Connected to process 1234
"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum","dram__bytes_read.sum.per_second","smsp__inst_executed.sum","smsp__warps_launched.sum","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_membar_per_issue_active.ratio"
"","","ns","MB","B/s","inst","warp","","",""
"0","reduce_sequential<float>","79,968","67.11","839,254,101,641","7,012,352","65,536","1.5","4.5","0.0"
'''


class ParsesNcuCsv(unittest.TestCase):
    def test_one_record_per_kernel_with_units(self):
        kernels = profile_lab.parse_ncu_csv(NCU_CSV)
        self.assertEqual(len(kernels), 1)
        self.assertEqual(kernels[0]["Kernel Name"], "reduce_sequential<float>")
        self.assertEqual(kernels[0]["_units"]["gpu__time_duration.sum"], "ns")

    def test_values_are_converted_and_derived(self):
        values = profile_lab.kernel_values(profile_lab.parse_ncu_csv(NCU_CSV)[0])
        self.assertAlmostEqual(values["gpu__time_duration.sum"], 79.968)
        self.assertAlmostEqual(values["dram__bytes_read.sum.per_second"], 839.254101641)
        self.assertAlmostEqual(values["derived:inst_per_warp"], 107.0)
        self.assertAlmostEqual(values["derived:barrier_share"], 25.0)
        self.assertAlmostEqual(values["derived:membar_share"], 0.0)  # lab 11's row: present, and zero here

    def test_lab_11_shows_the_fence_and_the_load_rows(self):
        rows = {metric for _, metric, _, labs in profile_lab.ROWS if labs is None or 11 in labs}
        self.assertIn("derived:membar_share", rows)
        self.assertIn("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", rows)
        self.assertNotIn("derived:membar_share",
                         {metric for _, metric, _, labs in profile_lab.ROWS if labs is None or 10 in labs})


class ConvertsUnits(unittest.TestCase):
    def test_long_and_short_unit_names(self):
        self.assertAlmostEqual(profile_lab.scale(30464, "us", "nsecond"), 30.464)
        self.assertAlmostEqual(profile_lab.scale(30464, "us", "ns"), 30.464)
        self.assertAlmostEqual(profile_lab.scale(2.5e12, "GB/s", "byte/second"), 2500)
        self.assertAlmostEqual(profile_lab.scale(2.5, "GB/s", "TB/s"), 2500)
        self.assertAlmostEqual(profile_lab.scale(67.12, "MB", "Mbyte"), 67.12)

    def test_a_unit_of_the_wrong_kind_is_refused(self):
        with self.assertRaises(ValueError):
            profile_lab.scale(5, "us", "MB")


if __name__ == "__main__":
    unittest.main()


class WithoutNsightCompute(unittest.TestCase):
    def test_a_missing_ncu_is_one_error_line_and_a_non_zero_exit_not_a_traceback(self):
        import json
        import tempfile
        from pathlib import Path
        from unittest import mock
        with tempfile.TemporaryDirectory() as build:
            (Path(build) / "reduction_labs.json").write_text(json.dumps({"reference_dir": build}))
            with mock.patch.object(profile_lab, "find_ncu", return_value=None):
                with self.assertRaises(SystemExit) as stop:
                    profile_lab.main(["--lab", "05", "--who", "both", "--build-dir", build])
        self.assertIn("Nsight Compute (ncu) not found", str(stop.exception.code))
        self.assertTrue(str(stop.exception.code).startswith("error: "))
