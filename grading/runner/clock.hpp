// The timekeeper's protocol with the timing worker (timekeeper_main.cpp, time_worker_main.cpp).
//
// The timekeeper, a trusted program, starts the worker and stands between it and the grader: it
// decides when each timed call may start (a "go" line on the worker's control pipe), prepares
// that call's input first (on the GPU, in memory it shares with the worker, from a seed drawn at
// that moment), and stamps on its own clock when it said go and when the worker's report of the
// call arrived. Nothing the worker's process holds can move those stamps: a time the worker claims
// is held against them by the grader.
//
//   go t003 7 9f0c2a51d3e4b6a7\n     item, call (warm-up calls first), nonce (16 hex digits)
//   over t003\n                      the item has had its calls (its time budget is spent: plan.hpp);
//                                    the worker goes on with the next item
//
// The nonce fixes the call's canaries where the worker keeps its own inputs (a host item, or a
// device item on a machine where memory cannot be shared); with shared inputs it is the seed the
// input was generated from, already written when the go is sent.
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace reduction::grading {

// The control pipe ended before the go a worker waits for: the timekeeper is gone.
class ClockGone : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Go {
  std::string item;
  int call = -1;
  std::uint64_t nonce = 0;
};

std::string go_line(const Go& go);                              // with its newline
std::string over_line(const std::string& item);                 // with its newline
std::optional<Go> parse_go_line(const std::string& line);       // without the newline; nullopt when malformed

// The worker's side: reads go lines from the control pipe.
class ControlReader {
 public:
  explicit ControlReader(int fd) : fd_(fd) {}
  bool enabled() const { return fd_ >= 0; }
  // Blocks until the go of (item, call) arrives, or nullopt when the timekeeper says the item is
  // over; go lines of other items or calls are skipped (an item the worker gave up on: the
  // timekeeper goes on with the next). Throws ClockGone when the pipe ends first: the timekeeper is
  // gone, and nothing may be timed without it.
  std::optional<Go> wait(const std::string& item, int call);

 private:
  std::optional<std::string> next_line();
  int fd_;
  std::string pending_;
};

// "FD:BYTES" of the --shared-inputs flag.
struct SharedInputsArg {
  int fd = -1;
  std::size_t bytes = 0;
};
std::optional<SharedInputsArg> parse_shared_inputs_arg(const std::string& text);
std::string shared_inputs_arg(int fd, std::size_t bytes);

}  // namespace reduction::grading
