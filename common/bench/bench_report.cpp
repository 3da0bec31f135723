// Table, CSV and JSON output of reduction_bench.
#include "bench_report.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace reduction::bench {
namespace {

std::string number(const std::optional<double>& value, int precision = 3) {
  if (!value) return "";
  std::ostringstream out;
  out << std::setprecision(precision) << std::fixed << *value;
  return out.str();
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out + "\"";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string json_number(const std::optional<double>& value) { return value ? number(value, 4) : "null"; }

std::string power_of_two(std::size_t n) {
  for (int e = 0; e < 63; ++e)
    if ((std::size_t{1} << e) == n) return "2^" + std::to_string(e);
  return std::to_string(n);
}

}  // namespace

std::string csv_header() {
  return "student,lab,type,n,median_us,min_us,iqr_us,gbps,pct_roof,ref_median_us,ratio_to_ref,status,gpu,date";
}

std::string csv_line(const Row& row, const RunInfo& info) {
  std::ostringstream line;
  line << csv_field(row.student) << ',' << row.lab << ',' << row.type << ',' << row.n << ','
       << number(row.median_us) << ',' << number(row.min_us) << ',' << number(row.iqr_us) << ','
       << number(row.gbps, 1) << ',' << number(row.pct_roof, 1) << ',' << number(row.ref_median_us) << ','
       << number(row.ratio_to_ref, 4) << ',' << row.status << ',' << csv_field(info.device.name) << ','
       << info.date;
  return line.str();
}

void write_csv(const std::string& path, const std::vector<Row>& rows, const RunInfo& info) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << csv_header() << '\n';
  for (const auto& row : rows) out << csv_line(row, info) << '\n';
}

void write_json(const std::string& path, const std::vector<Row>& rows, const RunInfo& info) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  const DeviceInfo& d = info.device;
  out << "{\n  \"tool\": \"reduction_bench\",\n  \"version\": " << quoted(info.version)
      << ",\n  \"date\": " << quoted(info.date) << ",\n  \"device\": {\"name\": " << quoted(d.name)
      << ", \"compute_capability\": \"" << d.compute_major << "." << d.compute_minor << "\", \"sm_count\": "
      << d.sm_count << ", \"l2_bytes\": " << d.l2_bytes << ", \"global_memory_bytes\": " << d.global_memory_bytes
      << "},\n  \"clocks\": {\"sm_peak_mhz\": " << d.sm_clock_khz / 1000 << ", \"memory_peak_mhz\": "
      << d.memory_clock_khz / 1000 << ", \"sm_measured_mhz\": " << number(info.measured_sm_mhz, 0)
      << "},\n  \"versions\": {\"cuda_driver\": " << d.driver_version << ", \"cuda_runtime\": " << d.runtime_version
      << "},\n  \"results\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "    {\"student\": " << quoted(r.student) << ", \"lab\": " << quoted(r.lab) << ", \"type\": "
        << quoted(r.type) << ", \"n\": " << r.n << ", \"status\": " << quoted(r.status) << ", \"detail\": "
        << quoted(r.detail) << ", \"median_us\": " << json_number(r.median_us) << ", \"min_us\": "
        << json_number(r.min_us) << ", \"iqr_us\": " << json_number(r.iqr_us) << ", \"gbps\": "
        << json_number(r.gbps) << ", \"pct_roof\": " << json_number(r.pct_roof) << ", \"ref_median_us\": "
        << json_number(r.ref_median_us) << ", \"ratio_to_ref\": " << json_number(r.ratio_to_ref)
        << ", \"x_cub\": " << json_number(r.x_cub) << ", \"samples\": " << r.samples
        << ", \"discarded_throttled\": " << r.discarded_throttled << ", \"converged\": "
        << (r.converged ? "true" : "false") << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

void print_table(std::ostream& out, const std::vector<Row>& rows) {
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %-16s %-5s %8s %11s %9s %8s %8s %6s %7s %7s", "who", "lab", "type", "n",
                "median_us", "iqr_us", "GB/s", "%roof", "x CUB", "vs ref", "samples");
  out << line << '\n';
  for (const auto& r : rows) {
    if (r.status != "ok") {
      std::snprintf(line, sizeof line, "%-10.10s %-16s %-5s %8s  %s", r.student.c_str(), r.lab.c_str(),
                    r.type.c_str(), power_of_two(r.n).c_str(), (r.status + ": " + r.detail).c_str());
      out << line << '\n';
      continue;
    }
    std::snprintf(line, sizeof line, "%-10.10s %-16s %-5s %8s %11s %9s %8s %8s %6s %7s %7zu%s", r.student.c_str(),
                  r.lab.c_str(), r.type.c_str(), power_of_two(r.n).c_str(), number(r.median_us, 2).c_str(),
                  number(r.iqr_us, 2).c_str(), number(r.gbps, 0).c_str(), number(r.pct_roof, 1).c_str(),
                  number(r.x_cub, 2).c_str(), number(r.ratio_to_ref, 3).c_str(), r.samples,
                  r.discarded_throttled ? " (throttled samples dropped)" : "");
    out << line << '\n';
  }
}

}  // namespace reduction::bench
