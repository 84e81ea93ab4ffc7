// Reading the HTTPS token. See credentials.h.
#include "source/credentials.h"

namespace tpu::source {

Result<std::string> ReadToken(const GitCredentials& c, const Env& env) {
  if (!c.token_file.empty()) {
    auto text = env.ReadFile(c.token_file);
    if (!text.ok()) return Status::IoError("read token file " + text.status().message());
    std::string token = TrimSpace(*text);
    if (token.empty()) return Status::FailedPrecondition("token file " + c.token_file + " is empty");
    return token;
  }
  if (!c.token_env.empty()) {
    std::string token = TrimSpace(env.Var(c.token_env).value_or(""));
    if (token.empty()) return Status::FailedPrecondition("environment variable " + c.token_env + " is not set or empty");
    return token;
  }
  return Status::FailedPrecondition("no token configured");
}

}  // namespace tpu::source
