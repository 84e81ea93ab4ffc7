// prevent-destroy and maxDeletePercent.
#include "plan/guards.h"

#include "plan/ownership.h"

namespace tpu::plan {

bool PreventsDestroy(const Action& a) {
  if (a.node_pool) return HasResourceLabel(*a.node_pool, kPreventDestroyLabel, "true");
  const std::string* description = nullptr;
  if (a.workload_policy) description = &a.workload_policy->description;
  if (a.instance_template) description = &a.instance_template->description;
  if (a.instance_group_manager) description = &a.instance_group_manager->description;
  if (!description) return false;
  auto m = ParseComputeDescription(*description);
  return m && m->prevent_destroy;
}

void ApplyGuards(TargetPlan& t, bool allow_mass_delete) {
  t.delete_chips = 0;
  for (const auto& a : t.actions) {
    // A superseded pool's slot stays filled by its replacement: no capacity is lost.
    if (a.kind == ActionKind::kDelete && a.superseded_by.empty()) t.delete_chips += a.blast.chips_destroyed;
    if (a.destructive() && PreventsDestroy(a)) {
      t.errors.push_back(std::string(ResourceKindName(a.resource.kind)) + " " + a.resource.name +
                         " is marked tpu-provisioner.io/prevent-destroy: \"true\" and this plan would " +
                         ActionKindName(a.kind) + " it (" + a.reason +
                         "); remove the annotation first to allow it");
    }
  }
  // Integer arithmetic: refuse when delete/owned > percent/100.
  if (t.owned_chips > 0 && !allow_mass_delete &&
      static_cast<long>(t.delete_chips) * 100 > static_cast<long>(t.max_delete_percent) * t.owned_chips) {
    t.errors.push_back("plan deletes " + std::to_string(t.delete_chips) + " of the " +
                       std::to_string(t.owned_chips) + " chips this target owns (" +
                       std::to_string(t.delete_chips * 100 / t.owned_chips) +
                       "%), more than maxDeletePercent " + std::to_string(t.max_delete_percent) +
                       "%; rerun with --allow-mass-delete if that is intended");
  }
  if (!t.errors.empty() && t.status == TargetStatus::kPlanned) t.status = TargetStatus::kRefused;
}

}  // namespace tpu::plan
