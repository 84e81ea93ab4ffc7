// `watch`'s notification flags: --notify-url (repeatable; `@FILE` reads the
// URL from a file, since a Slack webhook URL is itself a secret and argv is
// visible to every user of the machine) and --notify-secret-file (or
// $TPU_PROVISIONER_NOTIFY_SECRET) for the HMAC signature. Owns the transport
// and the Notifier (daemon/notifier.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "daemon/notifier.h"
#include "http/curl_transport.h"

namespace tpu::cli {

inline constexpr const char* kNotifySecretEnv = "TPU_PROVISIONER_NOTIFY_SECRET";

struct NotifyFlags {
  std::vector<std::string> urls;
  std::string secret_file;
};

void AddNotifyFlags(CLI::App* cmd, NotifyFlags* flags);

struct NotifySetup {
  std::unique_ptr<http::CurlTransport> transport;
  std::unique_ptr<daemon::Notifier> notifier;  // null without --notify-url
};

// Reads the URLs and the secret. Errors name the flag and the file, never a value.
Result<std::unique_ptr<NotifySetup>> MakeNotifier(const NotifyFlags& flags);

}  // namespace tpu::cli
