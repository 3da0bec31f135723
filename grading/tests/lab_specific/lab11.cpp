// Lab 11's own tests: everything lab 10's promise covers (unaligned d_in; bitwise identical
// float results are checked for every lab that declares them), plus what a single pass with a ticket counter in device memory must survive:
// calls back to back on one stream with no host synchronization between them (the counter must
// be back at zero when each kernel ends, not when the host next looks), and a call captured
// into a CUDA graph and launched again and again (no host work at all between launches).
#include "lab_specific.hpp"

#include <cstdint>
#include <sstream>

namespace reduction::testing {
namespace {

// One grid of blocks, several, the full wave and beyond, a one-block call between multi-block
// ones, an empty call, and the first input again at the end (its float result must repeat).
const std::vector<std::size_t> kChainSizes = {1000003, 65537, 4096, (std::size_t{1} << 20) + 3, 0, 1, 1000003};

constexpr const char* kChainHint =
    "hint: each call here follows the previous one on the same stream with no host synchronization "
    "between them. A ticket counter that is not back at zero when a kernel ends (reset from the host, "
    "reset before the last block read it, or never reset), or state kept for the next call, breaks the "
    "calls after the first.";

template <typename T>
void add_back_to_back_case(const LabModule& lab, const LabRunner& runner) {
  const std::string type = type_name<T>();
  register_test("Lab11", "BackToBackCallsWithoutHostSyncAreEachRight_" + type, [&lab, &runner, type] {
    const std::uint64_t seed = default_seed();
    std::vector<std::vector<T>> inputs;
    for (std::size_t k = 0; k < kChainSizes.size(); ++k)  // the last input repeats the first: same seed
      inputs.push_back(make_input<T>(Pattern::mixed_sign, kChainSizes[k], k + 1 == kChainSizes.size() ? seed : seed + k));
    const auto runs = runner.run_chain(inputs, "lab 11 back-to-back calls, " + type);
    ASSERT_EQ(runs.size(), inputs.size());
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(runs[0]);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::string what = describe_case(lab, inputs[k].size(), type, Pattern::mixed_sign,
                                             k + 1 == runs.size() ? seed : seed + k) +
                               ", call " + std::to_string(k + 1) + " of " + std::to_string(runs.size()) +
                               " back to back\n  " + kChainHint;
      expect_correct_sum(lab, inputs[k], runs[k], what);
    }
    if constexpr (std::is_same_v<T, float>) {
      EXPECT_TRUE(same_bits(runs.front().value, runs.back().value))
          << "the first and the last call of the chain had the same input: " << bits_of(runs.front().value)
          << " then " << bits_of(runs.back().value) << "\n  " << kChainHint;
    }
  }, /*needs_gpu=*/true);
}

template <typename T>
void add_graph_case(const LabModule& lab, const LabRunner& runner, std::size_t n) {
  const std::string type = type_name<T>();
  register_test("Lab11", "ACallInACudaGraphIsRightAtEveryLaunch_" + type + "_n" + std::to_string(n),
                [&lab, &runner, type, n] {
    const std::uint64_t seed = default_seed();
    const auto first = make_input<T>(Pattern::mixed_sign, n, seed);
    const auto second = make_input<T>(Pattern::uniform_positive, n, seed + 1);
    const auto runs = runner.run_in_graph(first, second, "lab 11 in a CUDA graph, " + type);
    REDUCTION_STOP_IF_NOT_IMPLEMENTED(runs[0]);
    const std::string hint = "\n  hint: the graph replays the one captured launch with no host work between "
                             "launches: the kernel itself must leave its counter at zero.";
    expect_correct_sum(lab, first, runs[0], describe_case(lab, n, type, Pattern::mixed_sign, seed) +
                                                ", graph launch 1" + hint);
    for (std::size_t launch = 1; launch < runs.size(); ++launch)
      expect_correct_sum(lab, second, runs[launch],
                         describe_case(lab, n, type, Pattern::uniform_positive, seed + 1) + ", graph launch " +
                             std::to_string(launch + 1) + " (the input rewritten after launch 1)" + hint);
    if constexpr (std::is_same_v<T, float>) {
      EXPECT_TRUE(same_bits(runs[1].value, runs[2].value))
          << "graph launches 2 and 3 had the same input: " << bits_of(runs[1].value) << " then "
          << bits_of(runs[2].value);
    }
  }, /*needs_gpu=*/true);
}

}  // namespace

void register_lab11_tests(const LabModule& lab, const LabRunner& runner) {
  register_unaligned_input_tests(lab, runner, "Lab11");
  add_back_to_back_case<int>(lab, runner);
  add_back_to_back_case<float>(lab, runner);
  for (std::size_t n : {std::size_t{1000003}, std::size_t{2049}}) {
    add_graph_case<int>(lab, runner, n);
    add_graph_case<float>(lab, runner, n);
  }
}

}  // namespace reduction::testing
