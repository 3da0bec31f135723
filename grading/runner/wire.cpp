// The runner's line format: a writer for the untrusted side, a strict reader for the trusted one.
#include "wire.hpp"

#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace reduction::grading {
namespace {

constexpr std::size_t kMaxLine = 64 * 1024;
constexpr int kMaxWaits = 60;  // seconds a report line may wait for room on a full channel
constexpr std::size_t kMaxValues = 128;

void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {  // only printable ASCII goes through: no control codes
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

// A tiny recursive-descent reader for exactly the shapes emit() writes.
class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  bool object(WireLine& line) {
    if (!take('{')) return false;
    bool version = false;
    do {
      std::string key;
      if (!string(key) || !take(':')) return false;
      if (key == "t") {
        if (!string(line.token)) return false;
      } else if (key == "v") {
        std::string digits;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') digits += s_[pos_++];
        if (digits != std::to_string(kWireVersion)) return false;
        version = true;
      } else if (key == "values") {
        if (!list(line.values)) return false;
      } else {
        std::string value;
        if (!string(value)) return false;
        if (key == "event") line.event = value;
        else line.fields[key] = value;
      }
    } while (take(','));
    return take('}') && (skip(), pos_ == s_.size()) && version && !line.event.empty();
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool take(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool string(std::string& out) {
    if (!take('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      if (e == 'u') {
        if (pos_ + 4 > s_.size()) return false;
        const unsigned long code = std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16);
        pos_ += 4;
        out += code < 0x80 ? static_cast<char>(code) : '?';
      } else if (e == '"' || e == '\\' || e == '/') {
        out += e;
      } else {
        out += e == 'n' ? '\n' : e == 't' ? '\t' : '?';
      }
    }
    return false;
  }
  bool list(std::vector<std::string>& out) {
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      std::string value;
      if (!string(value) || out.size() >= kMaxValues) return false;
      out.push_back(value);
    } while (take(','));
    return take(']');
  }
  const std::string& s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string wire_line(const std::string& token, const std::string& event,
                      const std::map<std::string, std::string>& fields, const std::vector<std::string>* values) {
  std::string out = "{\"v\":" + std::to_string(kWireVersion) + ",\"t\":";
  append_json_string(out, token);
  out += ",\"event\":";
  append_json_string(out, event);
  for (const auto& [key, value] : fields) {
    out += ',';
    append_json_string(out, key);
    out += ':';
    append_json_string(out, value);
  }
  if (values) {
    out += ",\"values\":[";
    for (std::size_t i = 0; i < values->size(); ++i) {
      if (i) out += ',';
      append_json_string(out, (*values)[i]);
    }
    out += ']';
  }
  out += "}\n";
  return out;
}

void Reporter::emit(const std::string& event, const std::map<std::string, std::string>& fields,
                    const std::vector<std::string>* values) const {
  if (fd_ < 0) return;
  const std::string line = wire_line(token_, event, fields, values);
  int waits = 0;
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waits++ < kMaxWaits) {
      // The lab made the channel non-blocking (it shares the open file): wait until the grader read some.
      pollfd writable{fd_, POLLOUT, 0};
      ::poll(&writable, 1, 1000);
      continue;
    }
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void Reporter::finish(int status) const {
  std::fflush(stdout);  // what the student's code printed is its own output, kept apart
  std::fflush(stderr);
  emit("end");
  ::_exit(status);
}

int parse_fd(const std::string& text) {
  char* end = nullptr;
  const long fd = std::strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && fd >= 0 && fd < 65536 ? static_cast<int>(fd) : -2;
}

std::string read_token(int fd) {
  if (fd < 0) return "";
  std::string token;
  char buffer[64];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    token.append(buffer, static_cast<std::size_t>(n));
    if (token.size() > 256) break;
  }
  ::close(fd);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  bool hex = token.size() >= 16 && token.size() <= 128;
  for (char c : token) hex = hex && std::isxdigit(static_cast<unsigned char>(c));
  if (!hex) throw std::runtime_error("the token on --token-fd is not 16 to 128 hex digits");
  return token;
}

bool parse_wire_line(const std::string& text, WireLine& line) {
  if (text.size() > kMaxLine) return false;
  line = WireLine{};
  return Reader(text).object(line);
}

std::string json_string(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string bits_hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", bits);
  return text;
}

namespace {
// "0x" and exactly `digits` hex digits, nothing else (strtoull alone would take a sign or spaces).
bool parse_hex(const std::string& text, std::size_t digits, std::uint64_t& bits) {
  if (text.size() != digits + 2 || text[0] != '0' || text[1] != 'x') return false;
  for (std::size_t i = 2; i < text.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
  bits = std::strtoull(text.c_str() + 2, nullptr, 16);
  return true;
}
}  // namespace

bool parse_bits_hex(const std::string& text, std::uint32_t& bits) {
  std::uint64_t wide = 0;
  if (!parse_hex(text, 8, wide)) return false;
  bits = static_cast<std::uint32_t>(wide);
  return true;
}

std::string bits_hex64(std::uint64_t bits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(bits));
  return text;
}

bool parse_bits_hex64(const std::string& text, std::uint64_t& bits) { return parse_hex(text, 16, bits); }

}  // namespace reduction::grading
