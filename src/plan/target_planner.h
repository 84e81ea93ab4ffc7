// The planner of one target (planner.h's ComputePlan runs one per target):
// desired against live, ownership, replacements, Compute dependencies and
// guards. Internal to plan/; its methods are in target_planner.cc (the target,
// Compute objects, order) and target_planner_pools.cc (node pools and MIGs,
// slots, what is no longer declared).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cloud/types.h"
#include "manifest/types.h"
#include "plan/desired.h"
#include "plan/model.h"
#include "plan/ownership.h"
#include "plan/planner.h"
#include "plan/pool_diff.h"

namespace tpu::plan {

// "train-12" → {"train", 12}; names without a numeric suffix sort with index -1.
std::pair<std::string, int> SliceOf(const std::string& name);

// Live Compute objects of a project, by identity.
struct LiveCompute {
  std::map<std::string, const cloud::WorkloadPolicy*> policies;           // region/name
  std::map<std::string, const cloud::InstanceTemplate*> templates;        // name
  std::map<std::string, const cloud::InstanceGroupManager*> groups;       // zone/name
};
LiveCompute IndexCompute(const cloud::ProjectState* ps);

// A node pool the cloud reports broken (ERROR, RUNNING_WITH_ERROR): repaired by a replace.
bool Broken(const std::string& status);
// A Compute object whose description marks it as target `key`'s.
bool OwnedBy(const std::string& description, const std::string& key);
// Whether a node pool diff only writes tpu-provisioner's ownership labels:
// what adopting a pool that already matches its manifest changes.
bool OnlyOwnershipLabels(const std::vector<FieldChange>& changes);
// Chips of a live MIG: target size × chips per VM of its template's machine type.
int GroupChips(const cloud::InstanceGroupManager& g, const LiveCompute& lc);

class TargetPlanner {
 public:
  // `ps` (null when the project has nothing), `lc` (IndexCompute(ps), built
  // once per project: every target of the project reads it) and `o` must
  // outlive the planner.
  TargetPlanner(const std::string& project, const std::string& cluster, const cloud::ProjectState* ps,
                const LiveCompute& lc, const PlanOptions& o);
  TargetPlan Plan(const manifest::Target& t);
  // A target whose directory is gone: everything it owns is deleted.
  TargetPlan PlanVanished();

 private:
  TargetPlan Blocked();
  void ResolveCluster(const std::optional<std::string>& location, bool required);
  // This target's pools in the cluster, in live order; set once by
  // ResolveCluster, since planning asks for them per slot.
  const std::vector<const cloud::NodePool*>& OwnedPools() const { return owned_; }
  void ListWorkloadPools();
  void CountOwned();
  Action NewAction(ActionKind kind, ResourceRef ref, std::string source, std::string reason);
  ResourceRef PoolRef(const std::string& name) const;
  ResourceRef PolicyRef(const cloud::WorkloadPolicy& p) const;
  ResourceRef TemplateRef(const std::string& name) const;
  ResourceRef GroupRef(const cloud::InstanceGroupManager& g) const;
  void Conflict(const std::string& what, const std::string& source);
  void PlanPolicies();
  void PlanTemplates();
  // The dependency id of a policy path "projects/P/regions/R/resourcePolicies/N".
  std::string PolicyDep(const std::string& path) const;
  // Live pools that fill a desired slot: the pool with the slot's name (any
  // owner: an unmanaged one is a conflict or an adoption) first, then owned
  // pools labelled with the slot (create-before-delete replacements), by name.
  std::vector<const cloud::NodePool*> SlotCandidates(const std::string& slot) const;
  // A release channel keeps node auto-upgrade on: a manifest that turns it
  // off is refused here, at its line, rather than by GKE at apply time
  // (400 "Auto_upgrade cannot be false when release_channel REGULAR is set.").
  void CheckReleaseChannel(const manifest::Target& t);
  // One desired slot against the live pools that fill it. Usually one pool,
  // of the slot's name. Several after a create-before-delete replace was
  // interrupted between its create and its delete: the first that needs no
  // replace (and is not broken) is kept, the others are deleted as
  // superseded; when none fits, the first healthy one is replaced and the
  // others deleted.
  void PlanPools();
  // The delete of a pool that fills a slot another pool fills too.
  void PlanSuperseded(const cloud::NodePool& lp, const std::string& keeper, bool keeper_replaced);
  // A laddered slice's desired pool at the rung its live pool is on (the
  // best of them when it has two), or at the rung watch moves it to (`*move`);
  // notes its SliceRung line.
  DesiredPool AtLiveRung(const DesiredPool& dp, const std::vector<const cloud::NodePool*>& candidates,
                         bool* move);
  // The create of a slice: on a ladder, at its first rung with the rest as fallbacks.
  void PlanSliceCreate(const DesiredPool& dp, const std::string& source, const std::vector<std::string>& deps);
  void PlanSlotPool(const DesiredPool& dp, const cloud::NodePool& lp, Ownership own, bool broken,
                    PoolDiff d, const std::string& source, const std::vector<std::string>& deps,
                    bool ladder_move = false);
  void PlanGroups();
  // Owned resources no manifest declares any more: deleted (slices from the
  // highest index down), released (deletion-policy: abandon), or kept (prune: false).
  void PlanUndeclared();
  bool UndeclaredDeleteAllowed(const std::string& what);
  void Add(Action a);
  // Execution order and the dependencies between Compute objects:
  //   1. node pool deletes (capacity and quota are freed before anything new
  //      asks for them), highest slice index first;
  //   2. MIG deletes;
  //   3. workload policies, templates, node pools and MIGs, in that order;
  //   4. template deletes, then workload policy deletes, after every MIG and
  //      node pool action that may still use them.
  void Finish();

  const cloud::ProjectState* ps_;
  const PlanOptions& o_;
  const manifest::Target* target_ = nullptr;  // Plan()'s, while it runs
  const LiveCompute& lc_;
  TargetPlan tp_;
  const cloud::Cluster* cluster_ = nullptr;
  std::vector<const cloud::NodePool*> owned_;  // see OwnedPools()
  std::vector<std::string> owned_slots_;       // SlotOf(*owned_[i])
  DesiredTarget desired_;
  bool prune_ = true;
  // Live pool names a desired slot accounts for (its own name included).
  std::set<std::string> claimed_pools_;
  std::set<std::string> wanted_policies_, wanted_templates_, wanted_groups_;
};

}  // namespace tpu::plan
