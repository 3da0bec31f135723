// The timekeeper's two streams (timekeeper_main.cpp): what it writes to the grader (Transcript:
// its own lines and the worker's, tagged and stamped on its clock) and what it reads from the
// worker (Relay: every report line passed on as it arrives, watched for the call it waits for).
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>

namespace reduction::grading {

class Transcript {
 public:
  // The grader's channel, marked close-on-exec (no worker writes there); `start`: the clock's zero,
  // shared by a paired run's two transcripts so that their stamps compare.
  explicit Transcript(int fd, std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now());
  double now_us() const;        // microseconds on this process's monotonic clock since it started
  // "K <line>": a wire line of the timekeeper's own (its token is "timekeeper": nothing checks it,
  // the tag is what no worker can write).
  void own(const std::string& event, const std::map<std::string, std::string>& fields);
  // "W <us> <line>": a line of the worker's, as it came (cut at 64 KiB), read at `arrival_us`.
  void relayed(double arrival_us, const std::string& line);
  bool open() const { return fd_ >= 0; }

 private:
  void write_line(const std::string& line);
  int fd_;
  std::chrono::steady_clock::time_point start_;
};

class Relay {
 public:
  struct Outcome {
    bool reported = false;   // the worker reported the call (a sample line for it)
    double arrival_us = 0;   // when that line was read
    bool ended = false;      // the worker's channel ended (its "end", or it is gone)
  };
  Relay(int fd, Transcript& out) : fd_(fd), out_(out) {}
  // Relays until the worker reports `call` of `item`, gives up on the item, or ends.
  Outcome until_reported(const std::string& item, int call);
  bool item_failed(const std::string& item) const { return failed_.count(item) > 0; }
  void drain();  // relays the rest, until the worker's channel ends

 private:
  bool read_some(double& arrival_us);  // false at the end of the channel
  void take(const std::string& line, double arrival_us, const std::string& item, int call, Outcome& outcome);
  int fd_;
  Transcript& out_;
  std::string pending_;
  std::set<std::string> failed_;
  bool ended_ = false;
  double last_arrival_ = 0;  // when the data in pending_ was read
};

}  // namespace reduction::grading
