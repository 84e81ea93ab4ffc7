// NodeJoiner: TPUNodeGroup VMs become working Kubernetes nodes
// (docs/architecture.md, "TPUNodeGroup nodes"). One Sync() is one pass over
// the groups of the Kubernetes cluster's target:
//   - a RUNNING instance with no Node gets a bootstrap token (one Secret per
//     instance, reused after a restart, replaced when it expires) and the join
//     keys on its metadata, which its startup script polls for;
//   - a Node that appeared (matched by spec.providerID gce://P/Z/NAME) gets
//     the group's labels, and its token is revoked: keys off the metadata
//     first, then the Secret deleted;
//   - a Node of ours whose VM is gone is deleted, never one whose VM exists.
// Cordon() is teardown's first step, before the MIG is deleted.
//
// Thread-compatible: one thread calls it (the daemon's join thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "cloud/compute_client.h"
#include "kube/client.h"
#include "manifest/types.h"
#include "nodes/group_status.h"

namespace tpu::nodes {

// One TPUNodeGroup as the join needs it.
struct JoinGroup {
  std::string name;  // the node-group label's value
  std::string project, zone, mig;
  int requested = 0;
  bool bootstrap = false;     // spec.bootstrapKubernetes: tokens are handed out
  std::string control_plane;  // "host:port"; "" = cluster-info's server
  std::map<std::string, std::string> labels;  // patched onto its Nodes
};

// The TPUNodeGroups of `target` as the join needs them.
std::vector<JoinGroup> JoinGroupsOf(const manifest::Target& target);

struct JoinCounters {
  int64_t tokens_issued = 0, tokens_revoked = 0, tokens_expired = 0;
  int64_t labels_patched = 0, nodes_cordoned = 0, nodes_deleted = 0;
  int64_t errors = 0;
};

class NodeJoiner {
 public:
  // `now_s`: wall-clock Unix seconds (token expiry).
  NodeJoiner(kube::KubeClient& kube, cloud::ComputeClient& compute, std::function<int64_t()> now_s)
      : kube_(kube), compute_(compute), now_s_(std::move(now_s)) {}

  // One pass; `project` is the target's (Nodes of other projects are not ours
  // to judge). Returns every group's status; errors of single calls are in
  // each status's last_error and do not stop the pass.
  std::vector<GroupNodeStatus> Sync(const std::string& project, const std::vector<JoinGroup>& groups);
  // Marks every Node of `group` unschedulable.
  Status Cordon(const std::string& group);

  const JoinCounters& counters() const { return counters_; }
  // The last pass had no group and found nothing of ours to clean up (no
  // labelled Node, no token): passes over no groups may stop until there are some.
  bool quiet() const { return quiet_; }

 private:
  struct Pass;  // one Sync's listings (node_joiner.cc)
  void SyncGroup(Pass& pass, const JoinGroup& group, GroupNodeStatus& status);
  void JoinInstance(Pass& pass, const JoinGroup& group, const cloud::ManagedInstance& vm, GroupNodeStatus& status);
  void Revoke(Pass& pass, const JoinGroup& group, const std::string& instance, GroupNodeStatus& status);
  void LabelNode(const nlohmann::json& node, const JoinGroup& group, GroupNodeStatus& status);
  void DeleteStaleNodes(Pass& pass, const std::string& project);
  void Note(GroupNodeStatus& status, const Status& s);

  kube::KubeClient& kube_;
  cloud::ComputeClient& compute_;
  std::function<int64_t()> now_s_;
  JoinCounters counters_;
  bool quiet_ = false;
};

}  // namespace tpu::nodes
