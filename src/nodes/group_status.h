// How far a TPUNodeGroup's VMs are from being working nodes, for /status and
// the metrics (docs/architecture.md, "TPUNodeGroup nodes"). Failure reasons are
// the tpu-operator's: RequestRejected (the API refused a call of the apply),
// OperationFailed (an operation of the apply ended in error),
// InstancesCreationFailed (the MIG could not create VMs: its managed
// instances' lastAttempt errors).
#pragma once

#include <string>

namespace tpu::nodes {

struct GroupNodeStatus {
  std::string name;
  // Absent (no MIG yet) | Provisioning | Joining | Ready | Failed
  std::string phase;
  std::string reason;   // one of the three above when phase is Failed
  std::string message;
  int requested = 0;    // spec.nodeCount
  int instances = 0;    // VMs the MIG has
  int running = 0;      // of them RUNNING
  int joined = 0;       // with a Node
  int ready = 0;        // whose Node is Ready
  std::string last_error;  // a call of the last pass that failed
};

}  // namespace tpu::nodes
