// The join keys on one VM's metadata (docs/architecture.md, "TPUNodeGroup
// nodes"): what the startup script polls for, written once the VM is RUNNING
// and removed once its node has joined. Compute's instances.setMetadata
// replaces the whole item list and must carry the fingerprint of the metadata
// it read; a 412 means someone wrote in between, so it re-reads and retries.
#pragma once

#include <map>
#include <set>
#include <string>

#include "base/status.h"
#include "cloud/compute_client.h"

namespace tpu::nodes {

inline constexpr const char* kJoinTokenKey = "kubeadm-join-token";
inline constexpr const char* kControlPlaneKey = "kubeadm-control-plane-ip";
inline constexpr const char* kCaHashKey = "kubeadm-ca-hash";
// setMetadata attempts before a conflict is reported.
inline constexpr int kMetadataAttempts = 4;

struct InstanceRef {
  std::string project, zone, name;
};

// Sets `set` and drops `remove` from the instance's metadata, leaving every
// other item as it is. Returns whether anything was written (false: already so).
Result<bool> UpdateInstanceMetadata(cloud::ComputeClient& compute, const InstanceRef& vm,
                                    const std::map<std::string, std::string>& set,
                                    const std::set<std::string>& remove);

// The join keys' current values on the instance ("" when absent).
Result<std::map<std::string, std::string>> ReadJoinKeys(cloud::ComputeClient& compute, const InstanceRef& vm);

}  // namespace tpu::nodes
