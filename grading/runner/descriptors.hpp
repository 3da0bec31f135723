// The descriptors a runner must not hand to the student's module it loads.
//
// Under compute-sanitizer, the tool writes its report (its "log") on a pipe the grader reads: the
// grader hands the write end to the tool (--log-file /proc/self/fd/N), and the runner, which the
// tool starts as its child, inherits that descriptor and perhaps the tool's own copy of the log.
// Before it loads any student code, the runner closes every descriptor of its process that refers
// to that pipe (the grader names it by st_dev and st_ino: --close-sanitizer-log=DEV:INO, a name
// that no descriptor renumbering can make refer to something else). The student's module then
// has no descriptor to write into the tool's report with.
#pragma once

#include <optional>
#include <string>

namespace reduction::grading {

// A pipe (or any open file) by identity, as fstat() gives it.
struct FileIdentity {
  unsigned long long device = 0;
  unsigned long long inode = 0;
};

// "DEV:INO" in decimal, as the grader writes it; nullopt for anything else.
std::optional<FileIdentity> parse_file_identity(const std::string& text);

// Closes every descriptor of this process that refers to `file` (the ones /proc/self/fd lists,
// or, without /proc, 0 to the open-file limit). Returns how many it closed, or -1 when a copy
// survived (a close that failed): the caller must not go on to load student code then.
int close_copies_of(const FileIdentity& file);

}  // namespace reduction::grading
