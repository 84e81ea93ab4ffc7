// --notify-url and --notify-secret-file: see notify_setup.h.
#include "cli/notify_setup.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tpu::cli {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

Result<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(flag + " " + path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return Trim(ss.str());
}

}  // namespace

void AddNotifyFlags(CLI::App* cmd, NotifyFlags* flags) {
  cmd->add_option("--notify-url", flags->urls,
                  "POST a JSON event (with a Slack-compatible `text`) here on applies, failures, stockouts, "
                  "blocked targets, drift and history rewrites (repeatable; @FILE reads the URL from a file)");
  cmd->add_option("--notify-secret-file", flags->secret_file,
                  std::string("File holding the HMAC secret notifications are signed with (else $") + kNotifySecretEnv +
                      ")");
}

Result<std::unique_ptr<NotifySetup>> MakeNotifier(const NotifyFlags& flags) {
  auto setup = std::make_unique<NotifySetup>();
  if (flags.urls.empty()) return setup;
  daemon::NotifierOptions o;
  for (const auto& u : flags.urls) {
    std::string url = u;
    if (!u.empty() && u[0] == '@') {
      auto text = ReadFile("--notify-url", u.substr(1));
      if (!text.ok()) return text.status();
      url = *text;
    }
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)
      return Status::InvalidArgument("--notify-url: expected an http(s) URL");
    o.urls.push_back(url);
  }
  if (!flags.secret_file.empty()) {
    auto secret = ReadFile("--notify-secret-file", flags.secret_file);
    if (!secret.ok()) return secret.status();
    o.secret = *secret;
  } else if (const char* env = std::getenv(kNotifySecretEnv)) {
    o.secret = Trim(env);
  }
  setup->transport = std::make_unique<cloud::CurlTransport>();
  setup->notifier = std::make_unique<daemon::Notifier>(setup->transport.get(), o);
  return setup;
}

}  // namespace tpu::cli
