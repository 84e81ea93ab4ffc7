// Kubernetes timestamps: metav1.Time and MicroTime spellings of wall time
// (the clock itself is base/clock.h).
#pragma once

#include <string>

#include "base/clock.h"

namespace tpu::kube {

// "2006-01-02T15:04:05Z" (metav1.Time) and "2006-01-02T15:04:05.000000Z" (MicroTime).
std::string FormatTime(WallTime t);
std::string FormatMicroTime(WallTime t);
// Parses either spelling; false when malformed.
bool ParseTime(const std::string& text, WallTime* out);

}  // namespace tpu::kube
