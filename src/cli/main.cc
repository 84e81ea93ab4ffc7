// tpu-provisioner: GitOps for Cloud TPU capacity. Parses the command line and
// runs one subcommand. Exit codes: 0 success, 1 error (usage errors included),
// and the command-specific codes documented in the README.
#include <malloc.h>

#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include "base/version.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  // Blocks of 128 KiB and more (response bodies, their parse buffers) are
  // mmapped and given back when freed. Set explicitly, the threshold no longer
  // rises to the largest block freed (glibc's default), after which such
  // buffers, freed on several threads, leave holes in every thread's heap (a
  // cold plan of 20,000 node pools once peaked at 167 MB RSS instead of 146).
  // A long-running `watch` keeps this; `plan` raises it again (cmd_plan.cc).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  CLI::App app{"tpu-provisioner: GitOps for Cloud TPU capacity", "tpu-provisioner"};
  app.set_version_flag("--version", TPU_PROVISIONER_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  tpu-provisioner validate --repo example-project\n"
      "  tpu-provisioner plan --repo example-project --cloud sim     # no Google Cloud needed\n"
      "  tpu-provisioner apply --repo . --target my-proj/train\n"
      "Run `tpu-provisioner COMMAND --help` for a command's flags and examples.");
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  // SPDLOG_LEVEL=debug (or trace, warn, …) sets the log level; default info.
  spdlog::cfg::load_env_levels();
  tpu::cli::CommandContext ctx;
  tpu::cli::AddCatalogCommand(app, ctx);
  tpu::cli::AddPlanCommand(app, ctx);
  tpu::cli::AddApplyCommand(app, ctx);
  tpu::cli::AddValidateCommand(app, ctx);
  tpu::cli::AddWatchCommand(app, ctx);
  tpu::cli::AddSimCommand(app, ctx);
  tpu::cli::AddExportCommand(app, ctx);
  tpu::cli::AddCompletionCommand(app, ctx);
  tpu::cli::AddGitFetchCommand(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; every real usage
    // error is 1, so it never reads as plan's "2 = changes".
    return app.exit(e) == 0 ? 0 : 1;
  }
  return ctx.exit_code;
}
