// reduction_timekeeper: the trusted clock of a timing run. It starts the timing worker (the
// reference worker, or the student's inside its sandbox: the command after "--"), owns the channel
// to the grader, and for every timed call of the plan:
//   1. prepares the call: for a device item, a fresh input written from a seed drawn now into the
//      memory it shares with the worker (shared_inputs.hpp), its exact sums, then the L2 flush,
//      left running so the worker's call queues behind it (input_writer.hpp);
//   2. stamps "go" on its own clock and sends it on the worker's control pipe (clock.hpp);
//   3. relays the worker's report lines to the grader, each stamped when it arrived, until the
//      worker reports that call;
//   4. writes its own line for the call: when it began preparing, said go and read the report, and
//      what the call had to return.
// The worker's lines travel only through it, tagged as the worker's (contract.json "timekeeper"),
// so no line of the worker's can pass for the timekeeper's. The grader holds every claimed time
// against these stamps (benchmark.py); the checker checks every result against these sums.
//
//   reduction_timekeeper --plan=TIMING_PLAN --out-fd=N [PAIR FLAGS] -- WORKER [ARGS...]
// It appends the worker's --control-fd, --report-fd and (where memory can be shared)
// --shared-inputs flags to that command.
//
// A paired run (host items only; contract.json "pair"): the timekeeper also starts the trusted
// reference worker (--pair-worker, its own plan and token, its transcript on --pair-out-fd) and
// times the two call by call, reference and student in turn, R S S R R S ..., so that both see the
// same moment of the machine: a host loop's time drifts by several percent from one process to
// the next, far less from one call to the next. The student's worker joins the --worker-cgroup
// folders before it execs, and that cgroup (--freeze) is frozen during every reference call: what
// the student left running cannot touch the reference's time. A freeze that fails stops the
// student's timing there, with a clock_error on its transcript.
#include "cgroup_freezer.hpp"
#include "clock.hpp"
#include "input_writer.hpp"
#include "shared_inputs.hpp"
#include "timekeeper_relay.hpp"
#include "wire.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <reduction/device_info.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduction::grading {
namespace {

std::uint64_t fresh_seed() {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed))
    throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
  return seed;
}

std::string hex16(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

std::string number(double value, const char* format = "%.17g") {
  char text[40];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// The GPU side, made only when the plan has a device item.
struct DeviceSide {
  std::unique_ptr<InputWriter> writer;
  std::unique_ptr<SharedInputs> shared;  // null: the worker keeps its own inputs (why says why)
  std::string why;
  std::string name;
};

DeviceSide device_side(const TimingPlan& plan) {
  DeviceSide side;
  std::size_t max_items = 0;
  for (const TimingItem& item : plan.items)
    if (item.on_device) max_items = std::max(max_items, item.n);
  bool device = false;
  for (const TimingItem& item : plan.items) device = device || item.on_device;
  if (!device) return side;
  side.name = query_device_info().name;
  side.writer = std::make_unique<InputWriter>(max_items);
  side.shared = SharedInputs::create(std::max<std::size_t>(max_items, 1) * sizeof(float), side.why);
  return side;
}

struct Pipes {
  int control_read = -1, control_write = -1, report_read = -1, report_write = -1;
};

Pipes make_pipes() {
  int control[2], report[2];
  if (::pipe2(control, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
  // The worker's ends must survive its exec; the timekeeper's own must not reach it.
  ::fcntl(control[0], F_SETFD, 0);
  ::fcntl(report[1], F_SETFD, 0);
  return {control[0], control[1], report[0], report[1]};
}

// `procs_files`: cgroup.procs files the worker joins before it execs (an exit 126 where it cannot:
// it never runs outside the cgroup it is to be frozen in).
pid_t start_worker(std::vector<std::string> argv, const Pipes& pipes, const SharedInputs* shared,
                   const std::vector<std::string>& procs_files = {}) {
  argv.push_back(std::string(REDUCTION_CLOCK_CONTROL_FD_FLAG "=") + std::to_string(pipes.control_read));
  argv.push_back(std::string(REDUCTION_REPORT_FD_FLAG "=") + std::to_string(pipes.report_write));
  if (shared)
    argv.push_back(std::string(REDUCTION_CLOCK_SHARED_INPUTS_FLAG "=") + shared_inputs_arg(shared->fd(), shared->bytes()));
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    if (!join_cgroups(procs_files)) {
      static const char message[] = "reduction_timekeeper: the worker cannot join its cgroup\n";
      (void)!::write(2, message, sizeof message - 1);
      ::_exit(126);
    }
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "reduction_timekeeper: cannot start %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipes.control_read);
  ::close(pipes.report_write);
  return pid;
}

// One timed call, steps 1 to 4 of the top comment. False when the worker is gone.
bool time_call(const TimingItem& item, int call, DeviceSide& side, int control, Relay& relay, Transcript& out,
               std::map<std::string, std::string> fields = {}) {
  fields.insert({{"item", item.id}, {"call", std::to_string(call)}, {"type", to_string(item.type)}});
  const double prep = out.now_us();
  const std::uint64_t seed = fresh_seed();
  fields["nonce"] = hex16(seed);
  if (item.on_device && side.shared) {
    const ExpectedSum expected = side.writer->write(side.shared->data(), item.type, item.n, seed);
    fields["inputs"] = "shared";
    fields["sum"] = number(expected.sum);
    fields["sum_abs"] = number(expected.sum_abs);
    char bits[16];
    std::snprintf(bits, sizeof bits, "0x%08x", expected.int_sum);
    fields["int_sum"] = bits;
  } else {
    fields["inputs"] = item.on_device ? "in_process" : "host";
  }
  if (item.on_device) side.writer->flush_l2();
  const double go = out.now_us();
  const std::string line = go_line({item.id, call, seed});
  const bool sent = ::write(control, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const Relay::Outcome outcome = sent ? relay.until_reported(item.id, call) : Relay::Outcome{};
  if (item.on_device) side.writer->wait();
  fields["prep_us"] = number(prep, "%.1f");
  fields["go_us"] = number(go, "%.1f");
  fields["done_us"] = outcome.reported ? number(outcome.arrival_us, "%.1f") : "";
  out.own("window", fields);
  return sent && !outcome.ended;
}

// The item is over before its last call (its budget is spent: plan.hpp): the worker is told on
// its control pipe, the checker by the timekeeper's own line. False when the worker is gone.
bool end_item(const TimingItem& item, int calls, int control, Transcript& out) {
  out.own("item_over", {{"item", item.id}, {"calls", std::to_string(calls)}});
  const std::string line = over_line(item.id);
  return ::write(control, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

TimingPlan read_plan(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return read_timing_plan(text.str());
}

int exit_status_of(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int run(const std::string& plan_path, int out_fd, const std::vector<std::string>& worker) {
  Transcript out(out_fd);
  const TimingPlan plan = read_plan(plan_path);
  DeviceSide side = device_side(plan);
  const Pipes pipes = make_pipes();
  const pid_t child = start_worker(worker, pipes, side.shared.get());
  out.own("clock", {{"inputs", !side.writer ? "host" : side.shared ? "shared" : "in_process"},
                    {"why", side.why}, {"device", side.name}});
  Relay relay(pipes.report_read, out);
  bool going = true;
  try {
    for (const TimingItem& item : plan.items) {
      double timed_from = 0;  // when the first timed call began
      for (int call = 0; going && call < plan.warmup + plan.samples; ++call) {
        if (call == plan.warmup) timed_from = out.now_us();
        going = time_call(item, call, side, pipes.control_write, relay, out);
        if (relay.item_failed(item.id)) break;  // the worker gave up on the item: on to the next
        const double timed_us = call < plan.warmup ? 0 : out.now_us() - timed_from;
        if (going && timing_item_over(plan, call, timed_us)) {
          if (call + 1 < plan.warmup + plan.samples) going = end_item(item, call + 1, pipes.control_write, out);
          break;
        }
      }
    }
  } catch (const std::exception& e) {  // a CUDA error of the timekeeper's own: nothing more is timed
    out.own("clock_error", {{"message", e.what()}});
    ::kill(child, SIGKILL);
  }
  ::close(pipes.control_write);  // a worker still waiting for a go ends
  relay.drain();
  return exit_status_of(child);
}

// The flags of a paired run (the top comment); `worker` empty: an ordinary run.
struct Pair {
  std::string worker, plan, freeze;
  int out_fd = -2, token_fd = -2;
  std::vector<std::string> cgroups;
};

// One side of a paired run: a worker, its pipes, its relay and transcript.
struct Side {
  Side(int out_fd, const TimingPlan& plan, std::chrono::steady_clock::time_point start)
      : out(out_fd, start), plan(plan) {}
  Transcript out;
  const TimingPlan& plan;
  Pipes pipes;
  pid_t pid = -1;
  std::unique_ptr<Relay> relay;
  bool going = true;

  void start(const std::vector<std::string>& argv, const std::vector<std::string>& procs_files) {
    pipes = make_pipes();
    pid = start_worker(argv, pipes, nullptr, procs_files);
    relay = std::make_unique<Relay>(pipes.report_read, out);
  }
  void stop() {  // no more go lines: a worker waiting for one ends
    going = false;
    if (pipes.control_write >= 0) ::close(pipes.control_write);
    pipes.control_write = -1;
  }
};

void check_pairable(const TimingPlan& student, const TimingPlan& reference) {
  bool same = student.items.size() == reference.items.size() && student.warmup == reference.warmup &&
              student.samples == reference.samples && student.seed == reference.seed &&
              student.buffers == reference.buffers && timing_min_samples(student) == timing_min_samples(reference) &&
              student.budget_ms == reference.budget_ms;
  for (std::size_t k = 0; same && k < student.items.size(); ++k) {
    const TimingItem &a = student.items[k], &b = reference.items[k];
    same = a.id == b.id && a.type == b.type && a.n == b.n && !a.on_device && !b.on_device;
  }
  if (!same)
    throw std::invalid_argument("a paired run needs two plans of the same host items, seed, calls, samples and budget");
}

constexpr int kFreezeTimeoutMs = 2000;

int run_paired(const std::string& plan_path, int out_fd, const std::vector<std::string>& worker, const Pair& pair) {
  const TimingPlan plan = read_plan(plan_path), reference_plan = read_plan(pair.plan);
  check_pairable(plan, reference_plan);
  Freezer freezer(pair.freeze);
  std::vector<std::string> procs_files;
  for (const std::string& folder : pair.cgroups) procs_files.push_back(folder + "/cgroup.procs");
  const auto start = std::chrono::steady_clock::now();  // one clock for both transcripts
  Side student(out_fd, plan, start), reference(pair.out_fd, reference_plan, start);
  student.start(worker, procs_files);
  reference.start({pair.worker, "--plan=" + pair.plan,
                   std::string(REDUCTION_TOKEN_FD_FLAG "=") + std::to_string(pair.token_fd)}, {});
  student.out.own("clock", {{"inputs", "host"}, {"paired", "student"}});
  reference.out.own("clock", {{"inputs", "host"}, {"paired", "reference"}});
  DeviceSide none;
  bool freeze_failed = false;
  for (std::size_t k = 0; k < plan.items.size() && (student.going || reference.going); ++k) {
    double timed_from = 0;  // when the first timed call of either side began
    for (int call = 0; call < plan.warmup + plan.samples; ++call) {
      if (call == plan.warmup) timed_from = student.out.now_us();
      for (const bool reference_turn : {call % 2 == 0, call % 2 != 0}) {  // R S, then S R: R S S R R S ...
        Side& side = reference_turn ? reference : student;
        if (!side.going) continue;
        std::map<std::string, std::string> fields;
        if (reference_turn) {  // frozen even once the student's worker ended: what it started may not have
          std::string why;
          if (!freezer.frozen() && !freeze_failed && !freezer.freeze(kFreezeTimeoutMs, why)) {
            freeze_failed = true;
            student.out.own("clock_error", {{"message", why}});
            student.stop();
          }
          fields["frozen"] = freezer.frozen() ? "1" : "0";
        } else {
          freezer.thaw(kFreezeTimeoutMs);
        }
        side.going = time_call(side.plan.items[k], call, none, side.pipes.control_write, *side.relay, side.out,
                               fields) && side.going;
      }
      if (student.relay->item_failed(plan.items[k].id) || reference.relay->item_failed(plan.items[k].id)) break;
      // One budget for the pair (both sides' calls), so both end the item at the same call.
      const double timed_us = call < plan.warmup ? 0 : student.out.now_us() - timed_from;
      if (timing_item_over(plan, call, timed_us)) {
        if (call + 1 < plan.warmup + plan.samples)
          for (Side* side : {&reference, &student})
            if (side->going) side->going = end_item(side->plan.items[k], call + 1, side->pipes.control_write, side->out);
        break;
      }
    }
  }
  freezer.thaw(kFreezeTimeoutMs);
  student.stop();
  reference.stop();
  reference.relay->drain();
  student.relay->drain();
  exit_status_of(reference.pid);  // its failures are on its own transcript
  return exit_status_of(student.pid);
}

}  // namespace
}  // namespace reduction::grading

int main(int argc, char** argv) {
  using namespace reduction::grading;
  std::string plan;
  int out_fd = -2;
  std::vector<std::string> worker;
  Pair pair;
  const auto value = [](const std::string& arg, const char* flag) -> std::optional<std::string> {
    const std::string prefix = std::string(flag) + "=";
    if (arg.rfind(prefix, 0) != 0) return std::nullopt;
    return arg.substr(prefix.size());
  };
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      worker.assign(argv + i + 1, argv + argc);
      break;
    }
    if (auto v = value(arg, "--plan")) plan = *v;
    else if (auto v = value(arg, REDUCTION_CLOCK_OUT_FD_FLAG)) out_fd = parse_fd(*v);
    else if (auto v = value(arg, REDUCTION_PAIR_WORKER_FLAG)) pair.worker = *v;
    else if (auto v = value(arg, REDUCTION_PAIR_PLAN_FLAG)) pair.plan = *v;
    else if (auto v = value(arg, REDUCTION_PAIR_OUT_FD_FLAG)) pair.out_fd = parse_fd(*v);
    else if (auto v = value(arg, REDUCTION_PAIR_TOKEN_FD_FLAG)) pair.token_fd = parse_fd(*v);
    else if (auto v = value(arg, REDUCTION_PAIR_FREEZE_FLAG)) pair.freeze = *v;
    else if (auto v = value(arg, REDUCTION_PAIR_WORKER_CGROUP_FLAG)) pair.cgroups.push_back(*v);
    else usage = true;
  }
  const bool paired = !pair.worker.empty();
  if (paired && (pair.plan.empty() || pair.out_fd < 0 || pair.token_fd < 0 || pair.freeze.empty())) usage = true;
  if (usage || plan.empty() || out_fd < 0 || worker.empty()) {
    std::fprintf(stderr, "usage: %s --plan=TIMING_PLAN " REDUCTION_CLOCK_OUT_FD_FLAG "=FD [" REDUCTION_PAIR_WORKER_FLAG
                         "=REFERENCE_WORKER " REDUCTION_PAIR_PLAN_FLAG "=PLAN " REDUCTION_PAIR_OUT_FD_FLAG "=FD "
                         REDUCTION_PAIR_TOKEN_FD_FLAG "=FD " REDUCTION_PAIR_FREEZE_FLAG "=CGROUP ["
                         REDUCTION_PAIR_WORKER_CGROUP_FLAG "=CGROUP ...]] -- WORKER [ARGS...]\n",
                 argv[0]);
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a worker or a grader gone is an error return, not a death
  try {
    return paired ? run_paired(plan, out_fd, worker, pair) : run(plan, out_fd, worker);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduction_timekeeper: %s\n", e.what());
    return 3;
  }
}
