// reduction_bench: your lab next to the reference, CUB and the read roof, in one run.
#include "bench_operators.hpp"
#include "bench_options.hpp"
#include "bench_report.hpp"
#include "cub_sum.hpp"
#include "reference_note.hpp"

#include <reduction/device_info.hpp>
#include <reduction/input.hpp>
#include <reduction/lab.hpp>
#include <reduction/lab_module.hpp>
#include <reduction/operators.hpp>
#include <reduction/reference.hpp>
#include <reduction/timing.hpp>
#include <reduction/watchdog.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

namespace reduction::bench {
namespace {

namespace fs = std::filesystem;

struct LabPair {
  int number = 0;
  std::optional<LabModule> student, reference;
  std::vector<std::pair<std::string, LabModule>> variants;  // --variant: named builds in place of yours
  std::string folder;

  // Who is timed, in order: yours (or the A/A side), the variants, the reference last.
  std::vector<std::pair<std::string, const LabModule*>> timed(const Options& options) const {
    std::vector<std::pair<std::string, const LabModule*>> who;
    if (student) who.emplace_back(options.aa_check ? "A/A" : options.student_name, &*student);
    for (const auto& [name, module] : variants) who.emplace_back(name, &module);
    if (reference) who.emplace_back("reference", &*reference);
    return who;
  }
};

// lab<NN>_<name>.so files of a folder, by lab number.
std::map<int, fs::path> find_modules(const std::string& dir) {
  std::map<int, fs::path> modules;
  if (dir.empty() || !fs::is_directory(dir)) return modules;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 8 && name.rfind("lab", 0) == 0 && entry.path().extension() == ".so" &&
        std::isdigit(static_cast<unsigned char>(name[3])) && std::isdigit(static_cast<unsigned char>(name[4])))
      modules[std::stoi(name.substr(3, 2))] = entry.path();
  }
  return modules;
}

// --variant NAME:DIR: each variant's name and the lab modules of its folder, found once.
std::vector<std::pair<std::string, std::map<int, fs::path>>> find_variants(const Options& options) {
  std::vector<std::pair<std::string, std::map<int, fs::path>>> found;
  for (const auto& [name, dir] : options.variants) found.emplace_back(name, find_modules(dir));
  return found;
}

std::vector<LabPair> load_labs(const Options& options) {
  const auto students = find_modules(options.student_dir);
  const auto references = find_modules(options.reference_dir);
  const auto variants = find_variants(options);
  std::vector<int> numbers = options.labs;
  if (numbers.empty())
    for (const auto& [number, path] : (options.references_only || options.aa_check ? references
                                       : !variants.empty() ? variants.front().second : students))
      numbers.push_back(number);
  std::vector<LabPair> labs;
  for (int number : numbers) {
    LabPair pair;
    pair.number = number;
    if (const auto it = references.find(number); it != references.end()) pair.reference = LabModule::load(it->second);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto& [name, found] = variants[v];
      const auto it = found.find(number);
      if (it == found.end())
        throw std::invalid_argument("no module for lab " + std::to_string(number) + " in " +
                                    options.variants[v].second + " (--variant " + name + ")");
      pair.variants.emplace_back(name, LabModule::load(it->second));
    }
    if (options.aa_check) {
      pair.student = pair.reference;  // A/A: the same implementation on both sides
    } else if (!options.references_only && variants.empty()) {
      const auto it = students.find(number);
      if (it == students.end())
        throw std::invalid_argument("no module for lab " + std::to_string(number) + " in " + options.student_dir);
      pair.student = LabModule::load(it->second);
    }
    const auto who = pair.timed(options);
    if (who.empty())  // --references-only or --aa: nothing to time
      throw std::invalid_argument(missing_references_note({number}, options.reference_dir));
    pair.folder = who.front().second->folder();
    labs.push_back(std::move(pair));
  }
  return labs;
}

// --dry-run: the options parsed and the modules each lab would load, found but not loaded, and no
// GPU touched: how a check of the course's texts (.ci/release_commands.py) tests a quoted
// benchmark command on a machine without a GPU. Exit 2 when a module the run needs is missing.
int dry_run(const Options& options) {
  const auto students = find_modules(options.student_dir);
  const auto references = find_modules(options.reference_dir);
  const bool times_yours = !options.references_only && !options.aa_check && options.variants.empty();
  const auto variants = find_variants(options);
  std::vector<int> numbers = options.labs, missing;
  if (numbers.empty())
    for (const auto& [number, path] : (times_yours ? students : references)) numbers.push_back(number);
  std::cout << "dry run: " << numbers.size() << " lab(s), " << options.sizes.size() << " size(s), "
            << options.types.size() << " type(s), " << options.operators.size() << " operator(s); nothing timed\n";
  int status = 0;
  if (numbers.empty()) std::cout << "no lab to time: no module in " << (times_yours ? options.student_dir : options.reference_dir) << "\n";
  for (int number : numbers) {
    const auto yours = students.find(number);
    const auto reference = references.find(number);
    std::cout << "lab " << (number < 10 ? "0" : "") << number << ": yours "
              << (!times_yours ? "not timed" : yours == students.end() ? "MISSING" : yours->second.string())
              << "; reference " << (reference == references.end() ? "none" : reference->second.string()) << "\n";
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto& [name, found] = variants[v];
      const auto it = found.find(number);
      std::cout << "lab " << (number < 10 ? "0" : "") << number << ": variant " << name << " "
                << (it == found.end() ? "MISSING in " + options.variants[v].second : it->second.string()) << "\n";
      if (it == found.end()) status = 2;
    }
    if (times_yours && yours == students.end()) status = 2;
    if (reference == references.end()) missing.push_back(number);
  }
  if (const auto note = missing_references_note(missing, options.reference_dir); !note.empty())
    std::cout << "note: " << note << "\n";
  if (status != 0) std::cerr << "error: a lab to time has no module in " << options.student_dir << "\n";
  return status;
}

// After the table: which labs were timed without a reference, and where the references are.
void say_missing_references(const std::vector<LabPair>& labs, const Options& options) {
  std::vector<int> missing;
  for (const auto& lab : labs)
    if (!lab.reference) missing.push_back(lab.number);
  if (const auto note = missing_references_note(missing, options.reference_dir); !note.empty())
    std::cout << "note: " << note << "\n";
}

Row basic_row(const std::string& who, const std::string& lab, const std::string& type, std::size_t n) {
  Row row;
  row.student = who;
  row.lab = lab;
  row.type = type;
  row.n = n;
  return row;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

// Everything measured for one (type, n): the input on host and device, output and scratch.
template <typename T>
struct Workload {
  std::size_t n;
  std::vector<T> host;
  DeviceBuffer<T> input;
  DeviceBuffer<T> outputs;  // one slot per implementation timed (at least 4), so interleaving never shares one
  DeviceBuffer<unsigned char> temp;
  ReferenceSum expected;
  std::int32_t expected_int = 0;

  Workload(std::size_t count, std::size_t slots)
      : n(count), host(make_input<T>(Pattern::mixed_sign, count, default_seed())), input(count),
        outputs(std::max<std::size_t>(4, slots)),
        temp(guaranteed_temp_storage_bytes(count)), expected(reference_sum(host)) {
    input.upload(host);
    REDUCTION_CHECK(cudaDeviceSynchronize());  // the upload is on the legacy stream: finish it first
    if constexpr (std::is_same_v<T, int>) expected_int = exact_int_sum(host);
  }

  bool matches(T got, const LabModule& lab) const {
    if constexpr (std::is_same_v<T, int>) {
      return got == expected_int;
    } else {
      return std::fabs(got - expected.sum) <= float_tolerance(lab.float_error_depth(n), expected.sum_abs).bound;
    }
  }
};

class Bench {
 public:
  Bench(const Options& options, const DeviceInfo& device)
      : options_(options), device_(device), timer_(timing_options(options)),
        roof_(*std::max_element(options.sizes.begin(), options.sizes.end()) * sizeof(float)) {}

  std::vector<Row> run(const std::vector<LabPair>& labs) {
    const std::size_t total = options_.types.size() * options_.sizes.size() * labs.size();
    std::size_t done = 0;
    for (const auto& type : options_.types) {
      for (std::size_t n : options_.sizes) {
        if (type == "int") measure_size<int>(labs, n, type, done, total);
        else measure_size<float>(labs, n, type, done, total);
      }
    }
    return rows_;
  }

 private:
  static TimingOptions timing_options(const Options& options) {
    TimingOptions t;
    t.budget_seconds = options.budget_seconds;
    return t;
  }

  template <typename T>
  void measure_size(const std::vector<LabPair>& labs, std::size_t n, const std::string& type, std::size_t& done,
                    std::size_t total) {
    Workload<T> work(n, 2 + options_.variants.size());
    const double bytes = static_cast<double>(n) * sizeof(T);
    measure_baselines(work, type, bytes);
    for (const auto& lab : labs) {
      std::cerr << "[" << ++done << "/" << total << "] " << lab.folder << " " << type << " n=" << n << "\n";
      measure_lab(work, lab, type, bytes);
    }
    if (!options_.operators.empty()) measure_operators(work, labs, type, bytes);
  }

  // --operators: every operator of every module with an operator entry (yours or each --variant, and
  // the reference), checked once, then timed interleaved with lab 10's reference sum (when loaded);
  // rows "12.<op>", ratio = x lab 10's sum.
  template <typename T>
  void measure_operators(Workload<T>& work, const std::vector<LabPair>& labs, const std::string& type, double bytes) {
    const LabModule* lab10 = nullptr;
    for (const auto& lab : labs)
      if (lab.number == 10 && lab.reference) lab10 = &*lab.reference;
    std::vector<Launch> launches;
    if (lab10)
      launches.push_back([&, lab10](cudaStream_t s) {
        const auto result =
            lab10->sum<T>(work.input.get(), work.n, work.outputs.get() + 2, work.temp.get(), work.temp.bytes(), s);
        if (!result.ok()) throw std::runtime_error(result.message);
      });
    std::vector<std::pair<std::string, std::string>> timed;  // who, lab column
    std::size_t modules = 0;  // each timed module gets its own REDUCTION_OPERATOR_COUNT output slots
    for (const auto& lab : labs) modules += lab.timed(options_).size();
    DeviceBuffer<ReductionMoments> outs(std::max<std::size_t>(modules, 1) * REDUCTION_OPERATOR_COUNT);
    std::size_t next_slots = 0;
    for (const auto& lab : labs) {
      for (const auto& [who, module] : lab.timed(options_)) {  // yours or the variants, then the reference
        if (!module->has_operators() || (who == "reference" && options_.aa_check)) continue;
        ReductionMoments* slots = outs.get() + REDUCTION_OPERATOR_COUNT * next_slots++;
        for (auto& op : operator_launches<T>(*module, options_.operators, work.input.get(), work.host, slots,
                                             work.temp.get(), work.temp.bytes())) {
          const std::string name = lab.folder.substr(0, 2) + "." + ops::operator_name(op.op);
          std::string failure;
          run_with_deadline([&] { failure = op.check(); }, call_timeout_seconds(60.0), "lab " + name);
          if (failure.empty()) {
            launches.push_back(op.launch);
            timed.emplace_back(who, name);
          } else {
            Row row = basic_row(who, name, type, work.n);
            row.status = "WRONG_ANSWER";
            row.detail = failure;
            rows_.push_back(row);
          }
        }
      }
    }
    if (timed.empty()) return;
    const auto timings = timer_.time_device_interleaved(launches);
    const std::size_t first = lab10 ? 1 : 0;
    for (std::size_t k = 0; k < timed.size(); ++k) {
      Row row = make_row(timed[k].first, timed[k].second, type, work.n, timings[first + k], bytes);
      if (lab10) {
        row.ref_median_us = timings[0].stats.median;
        row.ratio_to_ref = *row.median_us / timings[0].stats.median;
      }
      rows_.push_back(row);
    }
  }

  template <typename T>
  void measure_baselines(Workload<T>& work, const std::string& type, double bytes) {
    std::vector<Launch> launches = {[&](cudaStream_t s) { roof_.launch(static_cast<std::size_t>(bytes), s); }};
    std::optional<CubSum<T>> cub;
    if (options_.with_cub) {
      cub.emplace(work.n);
      launches.push_back([&](cudaStream_t s) { cub->launch(work.input.get(), work.n, work.outputs.get() + 3, s); });
    }
    const auto timings = timer_.time_device_interleaved(launches);
    roof_us_ = timings[0].stats.median;
    cub_us_.reset();
    if (cub) cub_us_ = timings[1].stats.median;  // before any row: rows show "x CUB" of this size
    rows_.push_back(make_row("baseline", "roof", type, work.n, timings[0], bytes));
    if (cub) rows_.push_back(make_row("baseline", "cub", type, work.n, timings[1], bytes));
  }

  template <typename T>
  void measure_lab(Workload<T>& work, const LabPair& lab, const std::string& type, double bytes) {
    std::vector<const LabModule*> who;
    std::vector<std::string> names;
    for (const auto& [name, module] : lab.timed(options_)) {
      who.push_back(module);
      names.push_back(name);
    }

    std::vector<Timing> timings(who.size());
    std::vector<std::string> failures(who.size());
    if (!who.front()->runs_on_device()) {
      for (std::size_t k = 0; k < who.size(); ++k) {
        T out{};
        failures[k] = check_once(*who[k], work, &out, nullptr);
        if (failures[k].empty())
          timings[k] = timer_.time_host([&] { who[k]->sum<T>(work.host.data(), work.n, &out, nullptr, 0, nullptr); });
      }
    } else {
      std::vector<Launch> launches;
      for (std::size_t k = 0; k < who.size(); ++k) {
        failures[k] = check_once(*who[k], work, work.outputs.get() + k, timer_.stream());
        launches.push_back([&, k](cudaStream_t s) {
          const auto result = who[k]->sum<T>(work.input.get(), work.n, work.outputs.get() + k, work.temp.get(),
                                             work.temp.bytes(), s);
          if (!result.ok()) throw std::runtime_error(result.message);
        });
      }
      std::vector<Launch> passing;
      std::vector<std::size_t> index;
      for (std::size_t k = 0; k < who.size(); ++k)
        if (failures[k].empty()) { passing.push_back(launches[k]); index.push_back(k); }
      if (!passing.empty()) {
        const auto measured = timer_.time_device_interleaved(passing);
        for (std::size_t j = 0; j < index.size(); ++j) timings[index[j]] = measured[j];
      }
    }
    const std::size_t first = rows_.size();
    for (std::size_t k = 0; k < who.size(); ++k) {
      Row row = make_row(names[k], lab.folder, type, work.n, timings[k], bytes);
      if (!failures[k].empty()) {
        row = basic_row(names[k], lab.folder, type, work.n);
        row.status = "WRONG_ANSWER";
        row.detail = failures[k];
      }
      rows_.push_back(row);
    }
    if (lab.reference && who.size() > 1 && failures.back().empty()) {
      const double ref = timings.back().stats.median;
      for (std::size_t r = first; r < rows_.size(); ++r) {
        if (rows_[r].student == "reference" || !rows_[r].median_us) continue;
        rows_[r].ref_median_us = ref;
        rows_[r].ratio_to_ref = *rows_[r].median_us / ref;
      }
    }
  }

  // One call under a deadline, synchronized and compared with the reference sum; returns the
  // reason it is wrong, or "" when right.
  template <typename T>
  std::string check_once(const LabModule& lab, Workload<T>& work, T* out, cudaStream_t stream) {
    T got{};
    LabCallResult result;
    run_with_deadline(
        [&] {
          if (lab.runs_on_device()) {
            result = lab.sum<T>(work.input.get(), work.n, out, work.temp.get(), work.temp.bytes(), stream);
            REDUCTION_CHECK(cudaStreamSynchronize(stream));
            REDUCTION_CHECK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
          } else {
            result = lab.sum<T>(work.host.data(), work.n, &got, nullptr, 0, nullptr);
          }
        },
        call_timeout_seconds(60.0), "lab " + lab.folder() + " at n = " + std::to_string(work.n));
    if (!result.ok()) return result.message;
    if (!work.matches(got, lab)) return "wrong sum " + run_tests_hint(lab.folder().substr(0, 2));
    return "";
  }

  Row make_row(const std::string& who, const std::string& lab, const std::string& type, std::size_t n,
               const Timing& timing, double bytes) const {
    Row row = basic_row(who, lab, type, n);
    const SampleStats& s = timing.stats;
    row.median_us = s.median;
    row.min_us = s.min;
    row.iqr_us = s.iqr();
    row.gbps = bytes / (s.median * 1e3);
    if (roof_us_ > 0) row.pct_roof = 100.0 * roof_us_ / s.median;
    if (cub_us_) row.x_cub = s.median / *cub_us_;
    row.samples = s.count;
    row.discarded_throttled = timing.discarded_throttled;
    row.converged = timing.converged;
    return row;
  }

  const Options& options_;
  const DeviceInfo& device_;
  Timer timer_;
  ReadRoof roof_;
  double roof_us_ = 0;
  std::optional<double> cub_us_;
  std::vector<Row> rows_;
};

// Each module called once per (type, n), nothing else launched: what a profiler should see.
// "16777216 (0x4b800000)": a result with the bits of its representation.
template <typename T>
std::string value_and_bits(T value) {
  static_assert(sizeof(T) == sizeof(std::uint32_t));
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  std::ostringstream text;
  text << std::setprecision(9) << value << " (0x" << std::hex << std::setw(8) << std::setfill('0') << bits << ")";
  return text.str();
}

template <typename T>
void run_each_once(const std::vector<LabPair>& labs, std::size_t n, const Options& options) {
  Workload<T> work(n, 4);
  Stream stream;
  for (const auto& lab : labs) {
    for (const auto& timed : lab.timed(options)) {
      const LabModule* module = timed.second;
      T got{};
      LabCallResult result;
      if (module->runs_on_device()) {
        result = module->sum<T>(work.input.get(), n, work.outputs.get(), work.temp.get(), work.temp.bytes(), stream.get());
        stream.synchronize();
        REDUCTION_CHECK(cudaMemcpy(&got, work.outputs.get(), sizeof(T), cudaMemcpyDeviceToHost));
      } else {
        result = module->sum<T>(work.host.data(), n, &got, nullptr, 0, nullptr);
      }
      // The value with its bits: two runs of this command show whether a lab's float sum is the
      // same bit for bit from call to call (lab 04's "Think about it").
      std::cout << module->path() << " n=" << n << ": "
                << (result.ok() ? (work.matches(got, *module) ? "correct" : "WRONG") : result.message);
      if (result.ok()) std::cout << ", sum " << value_and_bits(got);
      std::cout << "\n";
    }
  }
}

// Without a GPU, host labs (lab 01) are still timed: on the host clock, one call at a time, with
// neither CUB, the roof nor an L2 flush (GPU measurements), so no % of roof and no x CUB.
template <typename T>
void time_on_host(const LabPair& lab, std::size_t n, const std::string& type, const Options& options,
                  std::vector<Row>& rows) {
  const std::vector<T> input = make_input<T>(Pattern::mixed_sign, n, default_seed());
  const ReferenceSum expected = reference_sum(input);
  const auto who = lab.timed(options);
  const std::size_t first = rows.size();
  for (const auto& [name, module] : who) {
    Row row = basic_row(name, lab.folder, type, n);
    T got{};
    const auto call = [&] { return module->template sum<T>(input.data(), n, &got, nullptr, 0, nullptr); };
    LabCallResult result;
    run_with_deadline([&] { result = call(); }, call_timeout_seconds(60.0), "lab " + lab.folder);
    bool right = false;
    if constexpr (std::is_same_v<T, int>) right = got == exact_int_sum(input);
    else right = std::fabs(got - expected.sum) <= float_tolerance(module->float_error_depth(n), expected.sum_abs).bound;
    if (!result.ok() || !right) {
      row.status = "WRONG_ANSWER";
      row.detail = result.ok() ? "wrong sum " + run_tests_hint(lab.folder.substr(0, 2)) : result.message;
      rows.push_back(row);
      continue;
    }
    std::vector<double> samples;
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    while (samples.size() < 10 || (elapsed() < options.budget_seconds && samples.size() < 1000)) {
      const auto t0 = std::chrono::steady_clock::now();
      call();
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    const SampleStats s = summarize(samples);
    row.median_us = s.median;
    row.min_us = s.min;
    row.iqr_us = s.iqr();
    row.gbps = static_cast<double>(n) * sizeof(T) / (s.median * 1e3);
    row.samples = s.count;
    rows.push_back(row);
  }
  const bool reference_timed = lab.reference && rows.size() - first == who.size() && rows.back().median_us;
  for (std::size_t r = first; reference_timed && r + 1 < rows.size(); ++r) {
    if (!rows[r].median_us) continue;
    rows[r].ref_median_us = rows.back().median_us;
    rows[r].ratio_to_ref = *rows[r].median_us / *rows.back().median_us;
  }
}

int run_without_gpu(const Options& options, const std::vector<LabPair>& labs) {
  std::vector<std::string> gpu_labs;
  for (const auto& lab : labs)
    if (lab.timed(options).front().second->runs_on_device()) gpu_labs.push_back(lab.folder);
  if (!gpu_labs.empty() || options.run_once || labs.empty()) {
    std::cerr << "error: no CUDA GPU on this machine: GPU labs cannot be timed"
              << (gpu_labs.empty() ? "" : " (asked for " + gpu_labs.front() + (gpu_labs.size() > 1 ? ", ..." : "") + ")")
              << ". Without a GPU only lab 01, host code, runs: reduction_bench --labs 01\n";
    return 2;
  }
  RunInfo info{DeviceInfo{}, today(), REDUCTION_VERSION, 0};
  info.device.name = "no GPU (host CPU)";
  std::cout << "device: none; lab 01 is timed on the host CPU, without CUB or the read roof (GPU measurements)\n";
  std::vector<Row> rows;
  for (const auto& type : options.types)
    for (std::size_t n : options.sizes)
      for (const auto& lab : labs) type == "int" ? time_on_host<int>(lab, n, type, options, rows)
                                                 : time_on_host<float>(lab, n, type, options, rows);
  if (!options.csv_path.empty()) write_csv(options.csv_path, rows, info);
  if (!options.json_path.empty()) write_json(options.json_path, rows, info);
  print_table(std::cout, rows);
  say_missing_references(labs, options);
  return 0;
}

int run(int argc, char** argv) {
  const auto options = parse_options(argc, argv);
  if (!options) return 0;
  if (options->dry_run) return dry_run(*options);
  const auto labs = load_labs(*options);
  if (!cuda_device_available()) return run_without_gpu(*options, labs);
  if (options->run_once) {
    for (const auto& type : options->types)
      for (std::size_t n : options->sizes) type == "int" ? run_each_once<int>(labs, n, *options) : run_each_once<float>(labs, n, *options);
    say_missing_references(labs, *options);
    return 0;
  }
  RunInfo info{query_device_info(), today(), REDUCTION_VERSION, 0};
  std::cout << "device: " << info.device.summary() << "\n";
  Bench bench(*options, info.device);
  const auto rows = bench.run(labs);
  if (!options->csv_path.empty()) write_csv(options->csv_path, rows, info);
  if (!options->json_path.empty()) write_json(options->json_path, rows, info);
  print_table(std::cout, rows);
  say_missing_references(labs, *options);
  if (options->aa_check) {
    bool within = true;
    for (const auto& row : rows) {
      if (row.student != "A/A" || !row.ratio_to_ref) continue;
      const bool ok = std::fabs(*row.ratio_to_ref - 1.0) <= 0.03;
      within = within && ok;
      std::cout << "A/A check " << row.lab << " " << row.type << " n=" << row.n << ": ratio " << *row.ratio_to_ref
                << (ok ? " (within 1.00 +- 0.03: the harness can be trusted)" : " (OUTSIDE 1.00 +- 0.03)") << "\n";
    }
    return within ? 0 : 1;
  }
  return 0;
}

}  // namespace
}  // namespace reduction::bench

int main(int argc, char** argv) {
  try {
    return reduction::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
