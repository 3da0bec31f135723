// Results of a benchmark run: one row per (who, lab, type, n), written as a terminal table,
// a long-format CSV and a JSON document.
#pragma once

#include <reduction/device_info.hpp>

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace reduction::bench {

struct Row {
  std::string student;  // a student name, "reference", or "baseline" (CUB, roof)
  std::string lab;      // "05_sequential", "cub", "roof"
  std::string type;     // "int" or "float"
  std::size_t n = 0;
  std::string status = "ok";  // ok, or WRONG_ANSWER / RUNTIME_ERROR with `detail`
  std::string detail;
  std::optional<double> median_us, min_us, iqr_us, gbps, pct_roof, ref_median_us, ratio_to_ref, x_cub;
  std::size_t samples = 0, discarded_throttled = 0;
  bool converged = false;
};

struct RunInfo {
  DeviceInfo device;
  std::string date;  // ISO 8601
  std::string version;
  double measured_sm_mhz = 0;
};

// What a wrong sum's row tells the student to do next: the lab's tests, by the command the labs'
// READMEs give ("NN" is the lab's number, "02").
inline std::string run_tests_hint(const std::string& lab_number) {
  return "(run its tests: bash tools/test.sh student -L lab" + lab_number + ")";
}

// The CSV header, in the documented column order.
std::string csv_header();
std::string csv_line(const Row& row, const RunInfo& info);
void write_csv(const std::string& path, const std::vector<Row>& rows, const RunInfo& info);
void write_json(const std::string& path, const std::vector<Row>& rows, const RunInfo& info);
void print_table(std::ostream& out, const std::vector<Row>& rows);

}  // namespace reduction::bench
