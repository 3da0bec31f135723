// reduction_lab_check: the trusted checker. It never loads a student module. It writes the plans
// (with the run's seed) and judges what the untrusted runner and timing worker printed, by
// regenerating every input and computing every expected sum itself. Float tolerances, the lab's
// identity and whether it must be bitwise reproducible come from the reference module (trusted
// code), never from the student's.
//
//   reduction_lab_check plan   --lab=05_sequential --where=device --seed=S --reference=REF.so [--large] [--cases=...]
//   reduction_lab_check expect --plan=PLAN --cache=FILE     (adds the plan's expected sums to FILE)
//   reduction_lab_check tests  --plan=PLAN --observed=OUT --reference=REF.so [--cache=FILE] [--token=HEX]
//                              [--section]  (a run of several labs: the plan's lab's part of it)
//   reduction_lab_check timing --plan=PLAN --observed=OUT --reference-dir=DIR [--cache=FILE] [--token=HEX]
//   reduction_lab_check timing-plan --seed=S --samples=K --warmup=W --call-timeout=S [--min-samples=M --budget-ms=B] --items=ID,LAB,WHERE,TYPE,N[,MODULE];...
//   reduction_lab_check device        (the CUDA devices it sees, the first one's name and PCI bus id: the grader's own knowledge)
// The reports are one JSON object on stdout (grading/grader/judge/checks.py reads them).
#include "check_tests.hpp"
#include "check_timing.hpp"
#include "plan.hpp"
#include "wire.hpp"

#include <reduction/device_info.hpp>
#include <reduction/lab_module.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace reduction::grading {
namespace {

using Args = std::map<std::string, std::string>;

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "'");
    const auto eq = arg.find('=');
    args[arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
        eq == std::string::npos ? "1" : arg.substr(eq + 1);
  }
  return args;
}

std::string need(const Args& args, const std::string& key) {
  const auto it = args.find(key);
  if (it == args.end() || it->second.empty()) throw std::invalid_argument("missing --" + key);
  return it->second;
}

// The run's token (the runner's lines must carry it); none given: lines without one.
std::string token_of(const Args& args) {
  const auto it = args.find("token");
  return it == args.end() ? std::string() : it->second;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::invalid_argument("cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

int plan_command(const Args& args) {
  const LabModule reference = LabModule::load(need(args, "reference"));
  const std::string lab = need(args, "lab");
  if (reference.folder() != lab) throw std::invalid_argument("the reference module is " + reference.folder());
  const bool on_device = need(args, "where") == "device";
  const std::uint64_t seed = std::stoull(need(args, "seed"));
  const TestPlan plan = args.count("cases") ? make_small_plan(lab, on_device, seed, split(args.at("cases"), ';'))
                                            : make_test_plan(lab, on_device, seed, args.count("large") > 0,
                                                             reference.float_deterministic());
  std::cout << write_test_plan(plan);
  return 0;
}

void save_expectations(const Expectations& known, const std::string& path) {
  const std::string temporary = path + ".tmp";
  std::ofstream(temporary) << write_expectations(known);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

Expectations load_expectations(const TestPlan& plan, const Args& args) {
  Expectations known;
  if (const auto it = args.find("cache"); it != args.end() && std::ifstream(it->second).good())
    known = read_expectations(read_file(it->second));
  add_expectations(plan, known);
  return known;
}

int expect_command(const Args& args) {
  const TestPlan plan = read_test_plan(read_file(need(args, "plan")));
  save_expectations(load_expectations(plan, args), need(args, "cache"));
  return 0;
}

int tests_command(const Args& args) {
  const TestPlan plan = read_test_plan(read_file(need(args, "plan")));
  const LabModule reference = LabModule::load(need(args, "reference"));
  if (reference.folder() != plan.lab) throw std::invalid_argument("the reference module is " + reference.folder());
  const auto section = args.find("section");  // a run of several labs: this lab's part
  std::cout << check_tests(plan, reference, load_expectations(plan, args), read_file(need(args, "observed")),
                           token_of(args), section == args.end() ? std::string() : plan.lab);
  return 0;
}

int timing_command(const Args& args) {
  const TimingPlan plan = read_timing_plan(read_file(need(args, "plan")));
  Expectations known;
  const auto cache = args.find("cache");
  if (cache != args.end() && std::ifstream(cache->second).good()) known = read_expectations(read_file(cache->second));
  const std::size_t before = known.size();
  std::cout << check_timing(plan, need(args, "reference-dir"), read_file(need(args, "observed")), known, token_of(args));
  if (cache != args.end() && known.size() != before) save_expectations(known, cache->second);
  return 0;
}

int timing_plan_command(const Args& args) {
  TimingPlan plan;
  plan.seed = std::stoull(need(args, "seed"));
  plan.samples = std::stoi(need(args, "samples"));
  plan.warmup = std::stoi(need(args, "warmup"));
  plan.call_timeout_s = std::stod(need(args, "call-timeout"));
  if (const auto it = args.find("min-samples"); it != args.end()) plan.min_samples = std::stoi(it->second);
  if (const auto it = args.find("budget-ms"); it != args.end()) plan.budget_ms = std::stod(it->second);
  for (const auto& text : split(need(args, "items"), ';')) {
    const auto parts = split(text, ',');
    if (parts.size() < 5 || parts.size() > 6) throw std::invalid_argument("bad item '" + text + "'");
    TimingItem item{parts[0], parts[1], parts.size() == 6 ? parts[5] : "", parts[2] == "device", parse_type(parts[3]),
                    static_cast<std::size_t>(std::stoull(parts[4]))};
    plan.items.push_back(item);
  }
  std::cout << write_timing_plan(read_timing_plan(write_timing_plan(plan)));  // the reader's checks apply
  return 0;
}

// The devices this process sees, and the first one's name and PCI bus id: the grader gives the sandbox
// of a GPU run that GPU's device node alone (grading/grader/sandbox/gpu_nodes.py), found by its bus id.
int device_command() {
  int count = 0;
  if (!cuda_device_available() || cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  std::string name, bus_id;
  if (count > 0) {
    name = query_device_info().name;
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof id, 0) == cudaSuccess) bus_id = id;  // "" leaves every node bound
  }
  std::cout << "{\"devices\":" << count << ",\"name\":" << json_string(name)
            << ",\"pci_bus_id\":" << json_string(bus_id) << "}\n";
  return count > 0 ? 0 : 1;
}

}  // namespace
}  // namespace reduction::grading

int main(int argc, char** argv) {
  using namespace reduction::grading;
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    const Args args = parse(argc, argv);
    if (command == "plan") return plan_command(args);
    if (command == "expect") return expect_command(args);
    if (command == "tests") return tests_command(args);
    if (command == "timing") return timing_command(args);
    if (command == "timing-plan") return timing_plan_command(args);
    if (command == "device") return device_command();
    std::fprintf(stderr, "usage: %s plan|expect|tests|timing|timing-plan|device --key=value ... (see the top of check_main.cpp)\n", argv[0]);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduction_lab_check: %s\n", e.what());
    return 2;
  }
}
