// Reading a run's report channel: the grader's transcript of it, line by line, into the lines that
// count and the ones that do not (see contract.json, report_channel and timekeeper).
#pragma once

#include "wire.hpp"

#include <string>
#include <vector>

namespace reduction::grading {

// `observed` is the grader's transcript of the channel (contract.json): each line after its arrival
// time in microseconds and a space; a line that starts with '{' has no arrival time (a report
// written by hand, as the tests do). A timing run's channel is the timekeeper's (`timekeeper`):
// its own lines ("K ...") go to `clock`, whatever their token, and each of the worker's ("W <us>
// ...") counts as a line of the channel that arrived at the timekeeper's <us>; anything else there
// did not come from the timekeeper and is malformed.
struct ChannelLines {
  std::vector<WireLine> lines;
  std::vector<double> arrival_us;  // per line: when the grader (or the timekeeper) read it; -1 when not known
  std::vector<WireLine> clock;     // the timekeeper's own lines, in order
  int malformed = 0;  // did not parse (any text on the channel: the runner writes nothing else)
  int forged = 0;     // parsed, with another token
  int after_end = 0;  // anything after the first "end"
  bool end = false;
};
ChannelLines read_channel(const std::string& observed, const std::string& token, bool timekeeper = false);

// One lab's part of a run of several (the runner's "lab" line, then that lab's lines, up to the next
// "lab" line or "end"), with the lines before the first "lab" line (the device's); `end` when the
// part was closed, by the next lab or by the run's end. The counts of lines that do not count are the
// whole channel's; a lab named twice counts as a malformed line and keeps its first part only.
ChannelLines section_of(const ChannelLines& channel, const std::string& lab);

}  // namespace reduction::grading
