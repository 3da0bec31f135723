// Pausing a student's timing worker while the reference's calls of a paired run are timed
// (timekeeper_main.cpp). The worker joins a cgroup of its own before it execs (join_cgroups), so
// everything it starts, in any session, is there; the cgroup freezer (v2: cgroup.freeze and
// cgroup.events; v1: freezer.state) then stops all of it at once, and the kernel says when every
// task has stopped. Nothing of the student's runs beside a reference call: no spinning thread can
// slow the reference, however many it started.
#pragma once

#include <string>
#include <vector>

namespace reduction::grading {

class Freezer {
 public:
  // `folder`: the cgroup (its folder in the v2 tree, or in v1's freezer tree). Throws
  // std::invalid_argument when it has no freezer.
  explicit Freezer(std::string folder);
  // Freezes and waits until the kernel reports every task frozen, at most `timeout_ms`. False, with
  // why, when it could not (the cgroup is thawed again then).
  bool freeze(int timeout_ms, std::string& why);
  // Thaws and waits until the kernel reports it thawed (at most `timeout_ms`; a late thaw only
  // delays the student's own next call, it is never on the reference's clock).
  void thaw(int timeout_ms);
  bool frozen() const { return frozen_; }

 private:
  bool write_state(bool frozen);
  bool reports(bool frozen) const;  // the kernel's word: every task frozen (true) or none (false)
  std::string folder_;
  bool v2_ = true;
  bool frozen_ = false;
};

// In a child between fork and exec (async-signal-safe calls only, nothing allocated): writes its
// pid into each of `procs_files` (a cgroup folder's cgroup.procs). False when one could not be joined.
bool join_cgroups(const std::vector<std::string>& procs_files);

}  // namespace reduction::grading
