// `tpu-provisioner sim --listen 127.0.0.1:PORT [--state FILE] [--config FILE]`:
// runs the cloud emulator (GKE + Compute REST, src/sim) in the foreground
// until SIGINT or SIGTERM. Point a client at it with --gke-endpoint /
// --compute-endpoint or the CLOUDSDK_API_ENDPOINT_OVERRIDES_* variables.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "base/env.h"
#include "base/signal_watcher.h"
#include "cli/commands.h"
#include "sim/cloud_emulator.h"

namespace tpu::cli {
namespace {

struct SimFlags {
  std::string listen = "127.0.0.1:8085";
  std::string state_file;
  std::string config_file;
};

int RunSim(const SimFlags& f) {
  sim::CloudEmulatorConfig config;
  if (!f.config_file.empty()) {
    auto text = Env::Default().ReadFile(f.config_file);
    if (!text.ok()) {
      std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
      return 1;
    }
    auto parsed = sim::json::parse(*text, nullptr, false);
    if (parsed.is_discarded()) {
      std::fprintf(stderr, "error: %s: not valid JSON\n", f.config_file.c_str());
      return 1;
    }
    auto c = sim::CloudEmulatorConfigFromJson(parsed);
    if (!c.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", f.config_file.c_str(), c.status().message().c_str());
      return 1;
    }
    config = *c;
  }
  const auto colon = f.listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == f.listen.size()) {
    std::fprintf(stderr, "error: --listen: expected HOST:PORT, got \"%s\"\n", f.listen.c_str());
    return 1;
  }
  config.options.host = f.listen.substr(0, colon);
  try {
    config.options.port = std::stoi(f.listen.substr(colon + 1));
  } catch (...) {
    std::fprintf(stderr, "error: --listen: bad port in \"%s\"\n", f.listen.c_str());
    return 1;
  }
  config.options.state_file = f.state_file;

  // Block the stop signals before the server's threads start, so they inherit
  // the mask and only the wait below sees them.
  const std::vector<int> stop = {SIGINT, SIGTERM};
  if (Status s = BlockSignals(stop); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }

  sim::CloudEmulator emulator(config.options);
  if (Status s = emulator.Start(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const auto& c : config.clusters) {
    if (Status s = emulator.EnsureCluster(c.project, c.location, c.name, c.release_channel); !s.ok()) {
      std::fprintf(stderr, "error: cluster %s/%s/%s: %s\n", c.project.c_str(), c.location.c_str(),
                   c.name.c_str(), s.ToString().c_str());
      return 1;
    }
  }
  std::printf("cloud emulator listening on %s (GKE /v1/..., Compute /compute/v1/..., control /sim/...)\n",
              emulator.endpoint().c_str());
  std::fflush(stdout);
  (void)WaitForSignal(stop);
  emulator.Stop();
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app, CommandContext& ctx) {
  auto* cmd = app.add_subcommand("sim", "Run the GKE + Compute cloud emulator");
  cmd->footer("Examples:\n"
              "  tpu-provisioner sim --listen 127.0.0.1:8090 --state sim.json\n"
              "  tpu-provisioner plan --repo example-project --gke-endpoint http://127.0.0.1:8090/ \\\n"
              "      --compute-endpoint http://127.0.0.1:8090/");
  auto flags = std::make_shared<SimFlags>();
  cmd->add_option("--listen", flags->listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("--state", flags->state_file,
                  "JSON file that keeps the emulated cloud across restarts (written atomically)");
  cmd->add_option("--config", flags->config_file,
                  "JSON config: opLatencyMs, requestLatencyMs, token, faults, capacity, clusters, "
                  "recordFile (docs/emulator.md)");
  cmd->callback([flags, &ctx] { ctx.exit_code = RunSim(*flags); });
}

}  // namespace tpu::cli
