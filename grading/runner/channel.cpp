// Reading a run's report channel (see channel.hpp).
#include "channel.hpp"

#include <reduction/grading_contract.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace reduction::grading {

namespace {

// A line's leading "<digits> " stamp, taken off `text`; -1 when there is none.
double take_stamp(std::string& text) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return -1;
  const std::size_t space = text.find(' ');
  const double stamp = std::strtod(text.substr(0, space).c_str(), nullptr);
  text = space == std::string::npos ? std::string() : text.substr(space + 1);
  return stamp;
}

bool take_tag(std::string& text, const char* tag) {
  const std::string prefix = std::string(tag) + " ";
  if (text.rfind(prefix, 0) != 0) return false;
  text.erase(0, prefix.size());
  return true;
}

}  // namespace

ChannelLines read_channel(const std::string& observed, const std::string& token, bool timekeeper) {
  ChannelLines channel;
  std::istringstream lines(observed);
  for (std::string text; std::getline(lines, text);) {
    WireLine line;
    double arrival = take_stamp(text);  // the grader's arrival time
    if (timekeeper) {
      if (take_tag(text, REDUCTION_CLOCK_OWN_TAG)) {  // the timekeeper's: never the worker's, never "after the end"
        if (parse_wire_line(text, line)) channel.clock.push_back(std::move(line));
        else ++channel.malformed;
        continue;
      }
      if (!take_tag(text, REDUCTION_CLOCK_RELAYED_TAG)) {
        ++channel.malformed;
        continue;
      }
      arrival = take_stamp(text);  // the timekeeper's clock, not the grader's
    }
    if (channel.end) {
      ++channel.after_end;  // the runner _exit()s after "end": whatever follows is not its
      continue;
    }
    if (!parse_wire_line(text, line)) {
      ++channel.malformed;
      continue;
    }
    if (line.token != token) {
      ++channel.forged;
      continue;
    }
    if (line.event == "end") channel.end = true;
    channel.lines.push_back(std::move(line));
    channel.arrival_us.push_back(arrival);
  }
  return channel;
}

}  // namespace reduction::grading
