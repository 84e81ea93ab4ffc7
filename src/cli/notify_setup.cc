// --notify-url and --notify-secret-file: see notify_setup.h.
#include "cli/notify_setup.h"

#include "cli/flag_files.h"

namespace tpu::cli {

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
      auto text = ReadFlagFile("--notify-url", u.substr(1));
      if (!text.ok()) return text.status();
      url = *text;
    }
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0)
      return Status::InvalidArgument("--notify-url: expected an http(s) URL");
    o.urls.push_back(url);
  }
  auto secret = ReadSecret("--notify-secret-file", flags.secret_file, kNotifySecretEnv);
  if (!secret.ok()) return secret.status();
  o.secret = *secret;
  setup->transport = std::make_unique<http::CurlTransport>();
  setup->notifier = std::make_unique<daemon::Notifier>(setup->transport.get(), o);
  return setup;
}

}  // namespace tpu::cli
