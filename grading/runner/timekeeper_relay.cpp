// The timekeeper's transcript and relay (timekeeper_relay.hpp).
#include "timekeeper_relay.hpp"

#include "wire.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>

namespace reduction::grading {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024;

}  // namespace

Transcript::Transcript(int fd, std::chrono::steady_clock::time_point start) : fd_(fd), start_(start) {
  if (fd_ >= 0) ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
}

double Transcript::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
}

void Transcript::own(const std::string& event, const std::map<std::string, std::string>& fields) {
  std::string line = wire_line("timekeeper", event, fields);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  write_line(REDUCTION_CLOCK_OWN_TAG " " + line);
}

void Transcript::relayed(double arrival_us, const std::string& line) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, " %.0f ", std::floor(arrival_us));
  write_line(REDUCTION_CLOCK_RELAYED_TAG + std::string(stamp) + line.substr(0, kMaxLine));
}

void Transcript::write_line(const std::string& text) {
  if (fd_ < 0) return;
  const std::string line = text + "\n";
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the grader closed its end (a flood, or it stopped the run): nothing more goes out
      fd_ = -1;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

bool Relay::read_some(double& arrival_us) {
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    arrival_us = out_.now_us();
    if (n <= 0) return false;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
}

void Relay::take(const std::string& line, double arrival_us, const std::string& item, int call, Outcome& outcome) {
  out_.relayed(arrival_us, line);
  WireLine parsed;
  if (!parse_wire_line(line, parsed)) return;
  if (parsed.event == "end") ended_ = true;
  if (parsed.event == "item_error") failed_.insert(parsed.get("item"));
  if (parsed.event == "sample" && !outcome.reported && parsed.get("item") == item &&
      parsed.get("call") == std::to_string(call)) {
    outcome.reported = true;
    outcome.arrival_us = arrival_us;
  }
}

Relay::Outcome Relay::until_reported(const std::string& item, int call) {
  Outcome outcome;
  while (!ended_ && !outcome.reported && !failed_.count(item)) {
    double arrival = 0;
    for (std::size_t newline; (newline = pending_.find('\n')) != std::string::npos;) {
      take(pending_.substr(0, newline), last_arrival_, item, call, outcome);
      pending_.erase(0, newline + 1);
    }
    if (outcome.reported || ended_ || failed_.count(item)) break;
    if (pending_.size() > kMaxLine) {  // a line without end: relay what there is, as its own line
      take(pending_, last_arrival_, item, call, outcome);
      pending_.clear();
    }
    if (!read_some(arrival)) {
      ended_ = true;
      if (!pending_.empty()) take(pending_, arrival, item, call, outcome);
      pending_.clear();
      break;
    }
    last_arrival_ = arrival;
  }
  outcome.ended = ended_;
  return outcome;
}

void Relay::drain() {
  Outcome ignored;
  while (!ended_) until_reported("", -1);
  double arrival = 0;
  while (read_some(arrival)) {  // lines after "end": relayed, for the checker to count
    for (std::size_t newline; (newline = pending_.find('\n')) != std::string::npos;) {
      take(pending_.substr(0, newline), arrival, "", -1, ignored);
      pending_.erase(0, newline + 1);
    }
  }
  if (!pending_.empty()) take(pending_, arrival, "", -1, ignored);
  pending_.clear();
}

}  // namespace reduction::grading
