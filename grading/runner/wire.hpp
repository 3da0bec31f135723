// What the untrusted programs (the test runner and the timing worker, which load a student
// module) report, one JSON object a line, and the strict reader the trusted checker uses on it.
//
// The report travels on a channel of its own: a pipe the grader hands the program (--report-fd),
// never stdout or stderr, which belong to the student's code (it may print anything, a banner
// without a newline included). Each line carries the run's token ("t"), which the program reads
// from another pipe (--token-fd) before it loads the student's module; the checker counts a line
// with another token as forged. The token is no secret from code in the same process (it can
// read the memory); it keeps out every other writer and makes forging deliberate work. After its
// "end" line the program _exit()s, so no destructor or atexit handler of the student's runs
// after the results; the checker counts anything after "end" (after_end). Nothing here is
// believed: a line only says what the program claims to have seen, and the checker compares
// every claim with what it computes itself. A line that does not parse is skipped and counted.
//
//   {"v":2,"t":"9f..","event":"start","case":"c017"}
//   {"v":2,"t":"9f..","event":"observed","case":"c017","status":"ok","values":["0x3f800000"],"digest":"a1b2..","message":""}
//   {"v":2,"t":"9f..","event":"observed","case":"c212","status":"ok","values":["0x00000000000003e8","0x3d4ccccd","0x42c80000"],..}
//        (an operator case of moments: count, mean, M2, each field's bits)
//   {"v":2,"t":"9f..","event":"observed","case":"c213","status":"no_operator_entry","message":"..."}
//   {"v":2,"t":"9f..","event":"observed","case":"c031","status":"scratch_overrun","values":["0x3f800000"],"digest":"..",
//    "message":"the lab wrote past the end of its scratch: ...","scratch_bytes":"1052672",
//    "before_changed":"0","before_reach":"0","after_changed":"4","after_reach":"4"}
//        (a call wrote outside [d_temp_storage, + temp_storage_bytes): the guard bytes changed on
//        each side and the farthest distance from the scratch, in decimal digits; the checker
//        reads only these numbers (scratch_guard.hpp) and judges the case wrong, whatever values)
//   {"v":2,"t":"9f..","event":"refused","message":"the module is lab 04_interleaved, not 05_sequential"}
//   {"v":2,"t":"9f..","event":"device","name":"NVIDIA H200","sms":"132"}
//   {"v":2,"t":"9f..","event":"lab","lab":"05_sequential"}
//        (a run of several labs: the lines of this lab follow, up to the next "lab" or "end")
//   {"v":2,"t":"9f..","event":"sample","item":"t03","call":"7","us":"27.91","value":"0x4b7f0000"}
//   {"v":2,"t":"9f..","event":"item_error","item":"t03","message":"..."}
//   {"v":2,"t":"9f..","event":"item_error","item":"t03","kind":"scratch_overrun","call":"7","scratch_bytes":"1572864",
//    "before_changed":"0","before_reach":"0","after_changed":"64","after_reach":"64","message":"..."}
//        (the item is unverified; the timing checker words the problem from the numbers)
//   {"v":2,"t":"9f..","event":"end"}
#pragma once

#include <reduction/grading_contract.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace reduction::grading {

inline constexpr int kWireVersion = REDUCTION_WIRE_VERSION;

// One line: string fields, and at most one list of strings ("values").
struct WireLine {
  std::string event;
  std::string token;  // "t": the run's token as the line claims it
  std::map<std::string, std::string> fields;
  std::vector<std::string> values;
  std::string get(const std::string& key) const {
    const auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
};

// Writing (the untrusted side): the report channel of one run.
class Reporter {
 public:
  // `fd` < 0: reports are dropped (a run whose report nobody reads, such as one under
  // compute-sanitizer, or a program run by hand without --report-fd).
  Reporter(int fd, std::string token) : fd_(fd), token_(std::move(token)) {}
  // One line, written whole with write(2) (no stdio buffer a crash could lose or a student's
  // printf could interleave with). A failed write is ignored: the trusted side sees the gap.
  void emit(const std::string& event, const std::map<std::string, std::string>& fields = {},
            const std::vector<std::string>* values = nullptr) const;
  // Flushes the student's stdout and stderr, reports "end" and ends the process with _exit(status):
  // no static destructor or atexit handler runs after the results.
  [[noreturn]] void finish(int status) const;

 private:
  int fd_;
  std::string token_;
};

// The line emit() writes (tests build observations with it).
std::string wire_line(const std::string& token, const std::string& event,
                      const std::map<std::string, std::string>& fields = {},
                      const std::vector<std::string>* values = nullptr);

// The value of --report-fd= or --token-fd=: a descriptor number, or -2 for anything else.
int parse_fd(const std::string& text);

// The run's token: read whole from `fd` (the grader writes it and closes its end), then `fd` is
// closed. `fd` < 0 gives "". Throws std::runtime_error on a token that is not 16 to 128 hex digits.
std::string read_token(int fd);

// Reading (the trusted side). Returns false for anything but a well-formed line of this version:
// a flat object of string values, "v" a number, "values" a list of strings, bounded lengths.
bool parse_wire_line(const std::string& text, WireLine& line);

// A JSON string literal of `text`: printable ASCII only, everything else \u-escaped.
std::string json_string(const std::string& text);

// Bits of a value, as written in "values": "0x" and 8 hex digits.
std::string bits_hex(std::uint32_t bits);
bool parse_bits_hex(const std::string& text, std::uint32_t& bits);
// The bits of a 64-bit field (the count of moments): "0x" and 16 hex digits.
std::string bits_hex64(std::uint64_t bits);
bool parse_bits_hex64(const std::string& text, std::uint64_t& bits);

}  // namespace reduction::grading
