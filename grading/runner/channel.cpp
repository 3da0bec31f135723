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

ChannelLines section_of(const ChannelLines& channel, const std::string& lab) {
  ChannelLines part;
  part.malformed = channel.malformed, part.forged = channel.forged, part.after_end = channel.after_end;
  part.clock = channel.clock;
  bool before_any = true, inside = false, seen = false;
  for (std::size_t i = 0; i < channel.lines.size(); ++i) {
    const WireLine& line = channel.lines[i];
    if (line.event == "lab" || line.event == "end") {
      if (inside) part.end = true;
      inside = false;
      if (line.event == "lab") {
        before_any = false;
        if (line.get("lab") == lab && seen) ++part.malformed;  // a second part for the same lab: not believed
        inside = line.get("lab") == lab && !seen;
        seen = seen || inside;
      }
      continue;
    }
    if (!inside && !before_any) continue;
    part.lines.push_back(line);
    part.arrival_us.push_back(channel.arrival_us[i]);
  }
  return part;
}

}  // namespace reduction::grading
