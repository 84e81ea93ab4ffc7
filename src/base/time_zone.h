// Time zones for change windows ("0 22 * * 5" in Europe/Paris): the UTC
// offset in force at an instant, read from the system's compiled tz database
// (/usr/share/zoneinfo, TZif version 2 or later: its 64-bit transitions).
// Beyond the last transition the last offset holds; Debian's files list
// transitions through 2037.
//
// Plain value, immutable after Load: safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace tpu {

class TimeZone {
 public:
  static TimeZone Utc();
  // `name` is an IANA name ("Europe/Paris", "UTC"). NotFound when the
  // database has no such zone; InvalidArgument for a name that leaves `dir`.
  static Result<TimeZone> Load(const std::string& name, const std::string& dir = "/usr/share/zoneinfo");

  const std::string& name() const { return name_; }
  // Seconds east of UTC in force at `utc` (seconds since the epoch).
  int64_t OffsetAt(int64_t utc) const;

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;  // sorted; offsets_[i] holds from transitions_[i]
  std::vector<int32_t> offsets_;
  int32_t initial_offset_ = 0;        // before the first transition
};

}  // namespace tpu
