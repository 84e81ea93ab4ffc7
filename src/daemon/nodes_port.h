// NodesPort: what the reconcile loop asks of the TPUNodeGroup node join
// (docs/architecture.md, "TPUNodeGroup nodes"), behind one interface as
// KueuePort is for Kueue: which groups the Kubernetes cluster's target
// declares, teardown's first step (cordoning a group's nodes before the apply
// deletes or replaces its MIG), and how the apply of each group ended.
//
// Thread-safety: the loop's thread calls it; implementations hand the groups
// to their own thread.
#pragma once

#include <string>

#include "base/status.h"
#include "manifest/types.h"

namespace tpu::daemon {

class NodesPort {
 public:
  virtual ~NodesPort() = default;
  // The target whose TPUNodeGroups join, as this revision declares it (a
  // copy is kept; a blocked revision is never passed, so the last good one stays).
  virtual void SetTarget(const manifest::Target& target) = 0;
  // Marks the Nodes of `group` unschedulable.
  virtual Status Cordon(const std::string& group) = 0;
  // How the last apply of `group`'s Compute objects ended: reason ""
  // (they all succeeded), RequestRejected or OperationFailed, with the error.
  virtual void NoteApply(const std::string& group, const std::string& reason, const std::string& message) = 0;
};

}  // namespace tpu::daemon
