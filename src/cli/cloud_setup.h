// The flags and wiring shared by every command that talks to the cloud (plan,
// apply, watch): where the APIs are, which credentials, and — for
// `--cloud sim[:STATEFILE]` — the embedded emulator, started in-process with the
// clusters the repo's targets name already existing in it, as a real project's
// clusters would. Credentials come from the environment (ADC), never from argv.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "cloud/cloud.h"
#include "manifest/types.h"
#include "sim/cloud_emulator.h"

namespace tpu::cli {

struct CloudFlags {
  std::string cloud = "gcp";     // "gcp", "sim" or "sim:STATEFILE"
  std::string gke_endpoint;      // --gke-endpoint (else CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER)
  std::string compute_endpoint;  // --compute-endpoint (else …_COMPUTE)
  std::string sim_config;        // --sim-config: the emulator's JSON config (op latencies, capacity)
  bool insecure_skip_tls_verify = false;
};

void AddCloudFlags(CLI::App* cmd, CloudFlags* flags);

// The cloud as one command run sees it: a connection, and the emulator behind
// it when --cloud sim. Destroying it stops the emulator (saving its state file).
class CloudSession {
 public:
  // `repo` names the clusters the emulator must have; ignored for the real cloud.
  // `user_agent`: sent on every API call instead of the default (a sharded
  // replica names itself, so audit logs show which replica made a call).
  static Result<std::unique_ptr<CloudSession>> Open(const CloudFlags& flags, const manifest::Repo& repo,
                                                    const std::string& user_agent = "");
  ~CloudSession();

  cloud::CloudConnection& connection() { return *connection_; }
  sim::CloudEmulator* emulator() { return emulator_.get(); }  // null unless --cloud sim

 private:
  CloudSession() = default;
  std::unique_ptr<sim::CloudEmulator> emulator_;
  std::unique_ptr<cloud::CloudConnection> connection_;
};

// Prints an error that stops a command ("error: …") to stderr. When no
// credentials were found, it lists the places searched, one a line, and
// points to `--cloud sim` for trying the tool without Google Cloud.
void PrintFatalError(const Status& status);

// The GKE location the emulator gives a target's cluster: cluster.yaml's
// spec.location, else the region of its first pool's zone, else us-central1.
std::string SimClusterLocation(const manifest::Target& target);

}  // namespace tpu::cli
