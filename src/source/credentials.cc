// Reading the HTTPS token. See credentials.h.
#include "source/credentials.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tpu::source {
namespace {

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

Result<std::string> ReadToken(const GitCredentials& c) {
  if (!c.token_file.empty()) {
    std::ifstream in(c.token_file, std::ios::binary);
    if (!in) return Status::IoError("read token file " + c.token_file + ": " + std::strerror(errno));
    std::stringstream buf;
    buf << in.rdbuf();
    std::string token = Trim(buf.str());
    if (token.empty()) return Status::FailedPrecondition("token file " + c.token_file + " is empty");
    return token;
  }
  if (!c.token_env.empty()) {
    const char* v = std::getenv(c.token_env.c_str());
    std::string token = Trim(v ? v : "");
    if (token.empty()) return Status::FailedPrecondition("environment variable " + c.token_env + " is not set or empty");
    return token;
  }
  return Status::FailedPrecondition("no token configured");
}

}  // namespace tpu::source
