// `tpu-provisioner git-fetch`: hidden; the child process `watch` runs each
// fetch of a URL source in (source/child_fetch.h), so a remote that stalls can
// be abandoned by killing it. Fetches the branch into the work directory's
// bare clone and prints one line for the parent: status code, tab, commit or
// error message. Not meant to be run by hand.
#include <chrono>
#include <cstdio>
#include <memory>

#include "base/env.h"
#include "cli/commands.h"
#include "source/child_fetch.h"
#include "source/remote.h"

namespace tpu::cli {

void AddGitFetchCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("git-fetch", "Internal: one fetch for watch");
  cmd->group("");  // hidden from --help
  auto o = std::make_shared<source::RemoteOptions>();
  cmd->add_option("--url", o->url)->required();
  cmd->add_option("--branch", o->branch)->required();
  cmd->add_option("--workdir", o->workdir)->required();
  cmd->add_option("--git-token-file", o->credentials.token_file);
  cmd->add_option("--git-token-env", o->credentials.token_env);
  cmd->add_option("--git-username", o->credentials.username);
  cmd->add_option("--git-ssh-key", o->credentials.ssh_key_file);
  cmd->add_option("--git-known-hosts", o->credentials.ssh_known_hosts_file);
  cmd->callback([o, &ctx] {
    auto remote = source::RemoteRepo::Open(*o);
    // A progress mark at most every 200 ms while data flows, so the parent's
    // idle timeout only fires on a stall.
    auto last = Env::Default().Now();
    auto progress = [&last] {
      auto now = Env::Default().Now();
      if (now - last >= std::chrono::milliseconds(200)) {
        last = now;
        std::fputc(source::kChildFetchProgress, stdout);
        std::fflush(stdout);
      }
      return false;  // never stops the fetch itself: the parent kills it
    };
    Result<std::string> result = remote.ok() ? remote->Fetch(progress) : Result<std::string>(remote.status());
    std::fputs(source::FormatChildFetchResult(result).c_str(), stdout);
    std::fflush(stdout);
    ctx.exit_code = 0;
  });
}

}  // namespace tpu::cli
