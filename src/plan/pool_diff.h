// The diff of one node pool: desired (desired.h) against the live pool of the
// same name, field by field, after normalising GKE's defaults and spellings
// (normalize.h). Only fields the manifest sets are compared. Each change is
// classified: labels, taints, resourceLabels, tags, imageType, version, disk
// size and type (UpdateNodePoolRequest migrates the nodes), management and
// autoscaling are updated in place, the zones too in a call of their own; a
// single-host node count is a resize; everything else (machine type, service
// account, scopes, metadata, spot, reservation, flex-start, placement, a fixed
// multi-host slice's node count) forces a replace, and the diff says why.
#pragma once

#include <string>
#include <vector>

#include "cloud/types.h"
#include "plan/model.h"

namespace tpu::plan {

struct PoolDiffOptions {
  bool multi_host = false;
  // spec.nodeConfig.resourceLabels was written: extra live resource labels are
  // removed. Otherwise only our markers are compared and the rest kept.
  bool resource_labels_declared = false;
  std::string project;  // to read "projects/<project>/reservations/r" as "r"
};

struct PoolDiff {
  ActionKind kind = ActionKind::kNoop;  // noop, update, resize or replace
  std::vector<FieldChange> changes;
  std::vector<UpdateCall> update_calls;
  // What apply sends: the desired pool, with the live labels, taints and
  // resource labels it must keep merged in (updates replace whole sets). For
  // update/resize, version, imageType and the disk are set only when they changed.
  cloud::NodePool body;
  std::string replace_reason;  // kReplace only: which fields force it and why
};

PoolDiff DiffNodePool(const cloud::NodePool& desired, const cloud::NodePool& live,
                      const PoolDiffOptions& options);

}  // namespace tpu::plan
