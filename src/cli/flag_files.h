// Values that flags name a file for: a URL given as @FILE, a secret given by
// --…-secret-file or else an environment variable. Read through the
// environment seam (base/env.h); surrounding whitespace (a trailing newline)
// is never part of the value.
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"

namespace tpu::cli {

// The file's contents, trimmed. Errors start with `flag`.
Result<std::string> ReadFlagFile(const std::string& flag, const std::string& path,
                                 const Env& env = Env::Default());

// `file`'s contents when it is set, else the variable `var`, trimmed; "" when
// neither is set. An unreadable file is an error, never an empty secret.
Result<std::string> ReadSecret(const std::string& flag, const std::string& file, const std::string& var,
                               const Env& env = Env::Default());

}  // namespace tpu::cli
