// Parsing of reduction_bench's command line.
#include "bench_options.hpp"
#include "bench_operators.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace reduction::bench {
namespace {

constexpr const char* kUsage = R"(usage: reduction_bench [options]
Times lab modules: your build next to the reference, interleaved in one run on this GPU, with
cub::DeviceReduce::Sum and the pure-read roof measured in the same run.

  --labs 02,05          labs to time (default: every lab module in the student folder)
  --student-dir DIR     your lab modules (default: this build's labs/)
  --reference-dir DIR   reference modules (default: this build's solutions/ or the release's)
  --student-name NAME   the name in the CSV's student column (default: student)
  --variant NAME:DIR    time the lab modules in DIR as NAME, in place of yours; repeat it for
                        several builds of a lab (a study: grading/tools/coarsening_study.py), all
                        interleaved with the reference in one run (NAME: no ':')
  --references-only     time only the references, CUB and the roof
  --sizes LIST          e.g. 2^24 | 2^10,2^20 | 2^10..2^28 (default: 2^10,2^12,...,2^28)
  --types float,int     element types (default: float,int)
  --budget SECONDS      time budget per implementation and size (default: 0.5)
  --csv FILE            write the long-format CSV here
  --json FILE           write device info, clocks, versions and results as JSON here
  --aa                  A/A check: the reference timed as "student" and as "reference"
  --no-cub              skip the CUB row
  --run-once            call each module once per size and type, untimed, and print each
                        result with its bits (for ncu: see grading/tools/profile_lab.py)
  --dry-run             check the options and list the modules each lab would load, then
                        stop: nothing loaded, timed or run on a GPU
  --operators LIST      also time the operators of the labs that have them (lab 12), yours or
                        each --variant's and the reference's: sum,product,min,max,moments or
                        all; rows named 12.<operator>, timed interleaved with lab 10's reference
                        sum (load it: --labs 10,12), whose time their `vs ref` column divides by
)";

std::size_t parse_size(const std::string& text) {
  try {
    if (const auto caret = text.find('^'); caret != std::string::npos) {
      const double base = std::stod(text.substr(0, caret));
      const double exponent = std::stod(text.substr(caret + 1));
      return static_cast<std::size_t>(std::llround(std::pow(base, exponent)));
    }
    return static_cast<std::size_t>(std::llround(std::stod(text)));
  } catch (const std::exception&) {
    throw std::invalid_argument("not a size: '" + text + "' (use 16777216, 2^24 or 1.6e7)");
  }
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

}  // namespace

std::vector<std::size_t> default_sizes() { return parse_sizes("2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28"); }

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  for (const auto& part : split(text, ',')) {
    if (const auto dots = part.find(".."); dots != std::string::npos) {
      const std::size_t low = parse_size(part.substr(0, dots)), high = parse_size(part.substr(dots + 2));
      if (low == 0 || low > high) throw std::invalid_argument("bad size range: '" + part + "'");
      for (std::size_t n = low; n <= high; n *= 2) sizes.push_back(n);
    } else {
      sizes.push_back(parse_size(part));
    }
  }
  if (sizes.empty()) throw std::invalid_argument("no sizes in '" + text + "'");
  return sizes;
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return std::nullopt;
    } else if (arg == "--labs") {
      for (const auto& lab : split(value(), ',')) options.labs.push_back(std::stoi(lab));
    } else if (arg == "--student-dir") options.student_dir = value();
    else if (arg == "--reference-dir") options.reference_dir = value();
    else if (arg == "--student-name") options.student_name = value();
    else if (arg == "--references-only") options.references_only = true;
    else if (arg == "--sizes") options.sizes = parse_sizes(value());
    else if (arg == "--types") {
      options.types = split(value(), ',');
      for (const auto& t : options.types)
        if (t != "int" && t != "float") throw std::invalid_argument("unknown type '" + t + "' (int or float)");
    } else if (arg == "--budget") options.budget_seconds = std::stod(value());
    else if (arg == "--csv") options.csv_path = value();
    else if (arg == "--json") options.json_path = value();
    else if (arg == "--aa") options.aa_check = true;
    else if (arg == "--no-cub") options.with_cub = false;
    else if (arg == "--run-once") options.run_once = true;
    else if (arg == "--dry-run") options.dry_run = true;
    else if (arg == "--operators") options.operators = parse_operators(value());
    else if (arg == "--variant") {
      const std::string text = value();
      const auto colon = text.find(':');
      if (colon == 0 || colon == std::string::npos || colon + 1 == text.size())
        throw std::invalid_argument("--variant NAME:DIR, e.g. C=4:build/study/C4 (got '" + text + "')");
      options.variants.emplace_back(text.substr(0, colon), text.substr(colon + 1));
    }
    else throw std::invalid_argument("unknown option '" + arg + "' (see --help)");
  }
  if (options.sizes.empty()) options.sizes = options.aa_check ? std::vector<std::size_t>{1u << 24} : default_sizes();
  return options;
}

}  // namespace reduction::bench
