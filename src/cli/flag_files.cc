// Flag values read from files or the environment: see flag_files.h.
#include "cli/flag_files.h"

namespace tpu::cli {

Result<std::string> ReadFlagFile(const std::string& flag, const std::string& path, const Env& env) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return text.status().WithContext(flag);
  return TrimSpace(*text);
}

Result<std::string> ReadSecret(const std::string& flag, const std::string& file, const std::string& var,
                               const Env& env) {
  if (!file.empty()) return ReadFlagFile(flag, file, env);
  return TrimSpace(env.Var(var).value_or(""));
}

}  // namespace tpu::cli
