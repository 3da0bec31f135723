// The go lines and the control pipe (clock.hpp).
#include "clock.hpp"

#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace reduction::grading {
namespace {

constexpr std::size_t kMaxGoLine = 256;

bool parse_decimal(const std::string& text, long long max, long long& out) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::stoll(text);
  return out <= max;
}

}  // namespace

std::string go_line(const Go& go) {
  char nonce[17];
  std::snprintf(nonce, sizeof nonce, "%016" PRIx64, go.nonce);
  return "go " + go.item + " " + std::to_string(go.call) + " " + nonce + "\n";
}

std::string over_line(const std::string& item) { return "over " + item + "\n"; }

std::optional<Go> parse_go_line(const std::string& line) {
  std::istringstream in(line);
  std::string word, item, call, nonce, extra;
  if (!(in >> word >> item >> call >> nonce) || (in >> extra) || word != "go") return std::nullopt;
  if (item.empty() || item.size() > 32 || nonce.size() != 16 ||
      nonce.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  long long number = 0;
  if (!parse_decimal(call, 1000000, number)) return std::nullopt;
  Go go;
  go.item = item;
  go.call = static_cast<int>(number);
  go.nonce = std::strtoull(nonce.c_str(), nullptr, 16);
  return go;
}

std::optional<std::string> ControlReader::next_line() {
  for (;;) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    if (pending_.size() > kMaxGoLine) pending_.clear();  // not the timekeeper's: it writes short lines
    char chunk[512];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    pending_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::optional<Go> ControlReader::wait(const std::string& item, int call) {
  const std::string over = over_line(item);
  while (const auto line = next_line()) {
    if (*line + "\n" == over) return std::nullopt;
    const auto go = parse_go_line(*line);
    if (go && go->item == item && go->call == call) return *go;
  }
  throw ClockGone("the timekeeper's control pipe ended before the go of " + item + " call " +
                           std::to_string(call));
}

std::optional<SharedInputsArg> parse_shared_inputs_arg(const std::string& text) {
  const std::size_t colon = text.find(':');
  long long fd = 0, bytes = 0;
  if (colon == std::string::npos || !parse_decimal(text.substr(0, colon), 65535, fd) ||
      !parse_decimal(text.substr(colon + 1), 1ll << 40, bytes))
    return std::nullopt;
  return SharedInputsArg{static_cast<int>(fd), static_cast<std::size_t>(bytes)};
}

std::string shared_inputs_arg(int fd, std::size_t bytes) { return std::to_string(fd) + ":" + std::to_string(bytes); }

}  // namespace reduction::grading
