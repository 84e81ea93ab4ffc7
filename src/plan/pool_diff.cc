// Field-by-field node pool diff and its classification.
#include "plan/pool_diff.h"

#include <algorithm>
#include <set>

#include "plan/field_text.h"
#include "plan/normalize.h"

namespace tpu::plan {
namespace {

// GKE puts this in every pool's metadata unless told otherwise.
constexpr const char* kDefaultMetadataKey = "disable-legacy-endpoints";

class Differ {
 public:
  Differ(const cloud::NodePool& d, const cloud::NodePool& l, const PoolDiffOptions& o)
      : d_(d), l_(l), o_(o) {}

  PoolDiff Run() {
    result_.body = d_;
    Config();
    Placement();
    Size();
    Classify();
    return std::move(result_);
  }

 private:
  void Change(std::string path, std::string before, std::string after, bool replace,
              std::optional<UpdateCall> call = {}) {
    result_.changes.push_back({std::move(path), std::move(before), std::move(after), replace});
    if (call && std::find(calls_.begin(), calls_.end(), *call) == calls_.end()) calls_.push_back(*call);
  }

  // Per-key changes of a map, in key order; `ignore` filters live keys that
  // are not ours to compare. Both maps are walked together in key order;
  // values are quoted only for a change (Quote is one-to-one, so quoted
  // texts differ exactly when the values do).
  void MapChanges(const std::string& path, const cloud::StringMap& want, const cloud::StringMap& have,
                  bool remove_extra, bool (*ignore)(std::string_view), bool replace,
                  std::optional<UpdateCall> call) {
    auto w = want.begin();
    auto h = have.begin();
    while (w != want.end() || h != have.end()) {
      const bool take_w = h == have.end() || (w != want.end() && w->first <= h->first);
      const bool take_h = w == want.end() || (h != have.end() && h->first <= w->first);
      if (take_w && take_h) {  // in both
        if (w->second != h->second) Change(path + "[" + Quote(w->first) + "]", Quote(h->second), Quote(w->second),
                                           replace, call);
        ++w;
        ++h;
      } else if (take_w) {  // wanted, not there
        Change(path + "[" + Quote(w->first) + "]", kUnset, Quote(w->second), replace, call);
        ++w;
      } else {  // there, not wanted: a change only when extra keys are removed
        if (remove_extra && (!ignore || !ignore(h->first)))
          Change(path + "[" + Quote(h->first) + "]", Quote(h->second), kUnset, replace, call);
        ++h;
      }
    }
  }

  void Config() {
    if (d_.machine_type != l_.machine_type)
      Change("config.machineType", Quote(l_.machine_type), Quote(d_.machine_type), true);
    // UpdateNodePoolRequest migrates the nodes to a new disk size or type.
    if (d_.disk_size_gb) {
      int live = l_.disk_size_gb.value_or(kDefaultDiskSizeGb);
      if (live != *d_.disk_size_gb)
        Change("config.diskSizeGb", std::to_string(live), std::to_string(*d_.disk_size_gb), false,
               UpdateCall::kUpdateNodePool);
    }
    if (d_.disk_type) {
      std::string live = l_.disk_type.value_or(kDefaultDiskType);
      if (live.empty()) live = kDefaultDiskType;
      if (live != *d_.disk_type)
        Change("config.diskType", Quote(live), Quote(*d_.disk_type), false, UpdateCall::kUpdateNodePool);
    }
    if (d_.image_type && l_.image_type && !EqualsIgnoreCase(*d_.image_type, *l_.image_type))
      Change("config.imageType", Quote(*l_.image_type), Quote(*d_.image_type), false,
             UpdateCall::kUpdateNodePool);
    if (d_.service_account) {
      auto norm = [](const std::string& s) { return s.empty() ? std::string("default") : s; };
      std::string live = norm(l_.service_account.value_or(""));
      if (live != norm(*d_.service_account))
        Change("config.serviceAccount", Quote(live), Quote(*d_.service_account), true);
    }
    if (d_.oauth_scopes) {
      auto want = NormalScopes(*d_.oauth_scopes);
      auto have = NormalScopes(l_.oauth_scopes.value_or(std::vector<std::string>{}));
      if (want != have) Change("config.oauthScopes", ListText(have), ListText(want), true);
    }
    static const cloud::StringMap kNone;
    if (d_.labels) {
      const cloud::StringMap& have = l_.labels ? *l_.labels : kNone;
      MapChanges("config.labels", *d_.labels, have, true, IsSystemNodeLabel, false,
                 UpdateCall::kUpdateNodePool);
      for (const auto& [k, v] : have)
        if (IsSystemNodeLabel(k)) result_.body.labels->emplace(k, v);
    }
    if (d_.taints) {
      auto want = NormalTaints(*d_.taints);
      auto have = NormalTaints(l_.taints.value_or(std::vector<cloud::NodeTaint>{}));
      if (want != have)
        Change("config.taints", TaintsText(have), TaintsText(want), false, UpdateCall::kUpdateNodePool);
      for (const auto& t : l_.taints.value_or(std::vector<cloud::NodeTaint>{}))
        if (IsSystemTaint(t)) result_.body.taints->push_back(t);
    }
    {
      const cloud::StringMap& want = d_.resource_labels ? *d_.resource_labels : kNone;
      const cloud::StringMap& have = l_.resource_labels ? *l_.resource_labels : kNone;
      MapChanges("config.resourceLabels", want, have, o_.resource_labels_declared,
                 IsSystemResourceLabel, false, UpdateCall::kUpdateNodePool);
      // Whatever we do not compare, we keep: a PUT replaces the whole set.
      cloud::StringMap body = want;
      for (const auto& [k, v] : have)
        if (IsSystemResourceLabel(k) || (!o_.resource_labels_declared && !want.count(k)))
          body.emplace(k, v);
      result_.body.resource_labels = std::move(body);
    }
    if (d_.tags) {
      auto want = SortedSet(*d_.tags);
      auto have = SortedSet(l_.tags.value_or(std::vector<std::string>{}));
      if (want != have) Change("config.tags", ListText(have), ListText(want), false, UpdateCall::kUpdateNodePool);
    }
    if (d_.metadata) {
      cloud::StringMap have = l_.metadata.value_or(cloud::StringMap{});
      if (!d_.metadata->count(kDefaultMetadataKey)) have.erase(kDefaultMetadataKey);
      MapChanges("config.metadata", *d_.metadata, have, true, nullptr, true, std::nullopt);
    }
    if (d_.spot != l_.spot) Change("config.spot", BoolText(l_.spot), BoolText(d_.spot), true);
    if (d_.flex_start != l_.flex_start)
      Change("config.flexStart", BoolText(l_.flex_start), BoolText(d_.flex_start), true);
    Reservation();
    // A live pool that does not report its zones is not diffed on them. The
    // zones change in place, in a call of their own.
    if (!d_.locations.empty() && !l_.locations.empty() &&
        SortedSet(d_.locations) != SortedSet(l_.locations))
      Change("locations", ListText(SortedSet(l_.locations)), ListText(SortedSet(d_.locations)), false,
             UpdateCall::kUpdateLocations);
  }

  std::string ReservationText(const std::optional<cloud::ReservationAffinity>& ra) {
    if (!ra || !IsSpecific(ra)) return kUnset;
    std::vector<std::string> names;
    for (const auto& v : ra->values) names.push_back(ReservationName(v, o_.project));
    return ra->consume_reservation_type + " " + ListText(SortedSet(names));
  }
  static bool IsSpecific(const std::optional<cloud::ReservationAffinity>& ra) {
    return ra && ra->consume_reservation_type == "SPECIFIC_RESERVATION";
  }

  void Reservation() {
    // Pools without a specific reservation read as NO/ANY/unset depending on
    // the API version; all mean "not bound to a reservation" here.
    std::string want = ReservationText(d_.reservation_affinity);
    std::string have = ReservationText(l_.reservation_affinity);
    if (want != have) Change("config.reservationAffinity", have, want, true);
  }

  void Placement() {
    const auto& dp = d_.placement_policy;
    const auto& lp = l_.placement_policy;
    auto empty = [](const std::optional<cloud::PlacementPolicy>& p) {
      return !p || (p->type.empty() && p->tpu_topology.empty() && p->policy_name.empty());
    };
    if (empty(dp)) {
      if (!empty(lp))
        Change("placementPolicy", "{type = " + Quote(lp->type) + ", tpuTopology = " +
                                      Quote(lp->tpu_topology) + ", policyName = " +
                                      Quote(lp->policy_name) + "}",
               kUnset, true);
      return;
    }
    cloud::PlacementPolicy have = lp.value_or(cloud::PlacementPolicy{});
    // GKE reports tpu7x pools with policyName and tpuTopology but no type: a
    // desired type or topology left empty is not compared.
    if (!dp->type.empty() && dp->type != have.type)
      Change("placementPolicy.type", Quote(have.type), Quote(dp->type), true);
    if (!dp->tpu_topology.empty() && dp->tpu_topology != have.tpu_topology)
      Change("placementPolicy.tpuTopology", Quote(have.tpu_topology), Quote(dp->tpu_topology), true);
    if (LastSegment(dp->policy_name) != LastSegment(have.policy_name))
      Change("placementPolicy.policyName", Quote(have.policy_name), Quote(dp->policy_name), true);
  }

  void Size() {
    bool autoscaled = d_.autoscaling && d_.autoscaling->enabled;
    if (o_.multi_host) {
      // An autoscaled slice is anywhere between 0 and its VMs; a fixed one is
      // exactly its VMs, and setSize cannot change a multi-host pool.
      if (!autoscaled && d_.node_count != l_.node_count)
        Change("nodeCount", std::to_string(l_.node_count), std::to_string(d_.node_count), true);
    } else if (!autoscaled && d_.node_count != l_.node_count) {
      Change("nodeCount", std::to_string(l_.node_count), std::to_string(d_.node_count), false,
             UpdateCall::kSetSize);
    }

    cloud::NodePoolAutoscaling want = d_.autoscaling.value_or(cloud::NodePoolAutoscaling{});
    cloud::NodePoolAutoscaling have = l_.autoscaling.value_or(cloud::NodePoolAutoscaling{});
    if (!want.enabled) want = {};
    if (!have.enabled) have = {};
    // A location policy the manifest leaves to GKE is not compared.
    if (want.location_policy.empty()) have.location_policy.clear();
    if (want != have)
      Change("autoscaling", AutoscalingText(have), AutoscalingText(want), false, UpdateCall::kSetAutoscaling);

    // Management the manifest leaves out is GKE's to choose.
    if (d_.management) {
      const cloud::NodeManagement& wm = *d_.management;
      cloud::NodeManagement hm = l_.management.value_or(cloud::NodeManagement{true, true});
      if (wm.auto_repair != hm.auto_repair)
        Change("management.autoRepair", BoolText(hm.auto_repair), BoolText(wm.auto_repair), false,
               UpdateCall::kSetManagement);
      if (wm.auto_upgrade != hm.auto_upgrade)
        Change("management.autoUpgrade", BoolText(hm.auto_upgrade), BoolText(wm.auto_upgrade), false,
               UpdateCall::kSetManagement);
    }

    if (d_.version && l_.version && !VersionMatches(*d_.version, *l_.version))
      Change("version", Quote(*l_.version), Quote(*d_.version), false, UpdateCall::kUpdateNodePool);
  }

  static std::string AutoscalingText(const cloud::NodePoolAutoscaling& a) {
    if (!a.enabled) return "{enabled = false}";
    return "{enabled = true, min = " + std::to_string(a.min_node_count) +
           ", max = " + std::to_string(a.max_node_count) +
           (a.location_policy.empty() ? "" : ", locationPolicy = " + a.location_policy) + "}";
  }

  void Classify() {
    bool replace = std::any_of(result_.changes.begin(), result_.changes.end(),
                               [](const FieldChange& c) { return c.forces_replace; });
    if (replace) {
      result_.kind = ActionKind::kReplace;
      result_.replace_reason = ReplaceReason(result_.changes);
      return;
    }
    if (result_.changes.empty()) return;
    // Issue calls in a fixed order: whole-set updates, the zones alone, then
    // autoscaling, management, and the size last (so a size follows
    // autoscaling being turned off).
    std::vector<UpdateCall> order = {UpdateCall::kUpdateNodePool, UpdateCall::kUpdateLocations,
                                     UpdateCall::kSetAutoscaling, UpdateCall::kSetManagement,
                                     UpdateCall::kSetSize};
    for (UpdateCall c : order)
      if (std::find(calls_.begin(), calls_.end(), c) != calls_.end()) result_.update_calls.push_back(c);
    result_.kind = result_.update_calls == std::vector<UpdateCall>{UpdateCall::kSetSize}
                       ? ActionKind::kResize
                       : ActionKind::kUpdate;
    // An update PUT that names a version or image type asks GKE to move the
    // nodes to it ("1.30" means the newest 1.30 patch): send them only when
    // they are what changed.
    auto changed = [this](std::string_view path) {
      return std::any_of(result_.changes.begin(), result_.changes.end(),
                         [&](const FieldChange& c) { return c.path == path; });
    };
    if (!changed("version")) result_.body.version.reset();
    if (!changed("config.imageType")) result_.body.image_type.reset();
    // Likewise a disk size or type: each migrates every node.
    if (!changed("config.diskSizeGb")) result_.body.disk_size_gb.reset();
    if (!changed("config.diskType")) result_.body.disk_type.reset();
  }

  // Why a replace: the fields that force it and why GKE cannot change them
  // in place. A replace gives the TPU capacity up and asks for it again.
  static std::string ReplaceReason(const std::vector<FieldChange>& changes) {
    std::string fields, why;
    auto add_why = [&why](const char* w) {
      if (why.find(w) == std::string::npos) why += (why.empty() ? "" : "; ") + std::string(w);
    };
    for (const auto& c : changes) {
      if (!c.forces_replace) continue;
      fields += (fields.empty() ? "" : ", ") + c.path;
      const std::string& p = c.path;
      if (p == "config.machineType" || p.rfind("placementPolicy", 0) == 0 || p == "nodeCount")
        add_why("a TPU slice's shape is fixed when its pool is created");
      else if (p == "config.spot" || p == "config.flexStart" || p == "config.reservationAffinity")
        add_why("the capacity type is fixed when a pool is created");
      else
        add_why("UpdateNodePoolRequest cannot change it");
    }
    return "replaced because " + fields + " cannot change in place (" + why +
           "); the new pool must obtain its TPU capacity again";
  }

  const cloud::NodePool& d_;
  const cloud::NodePool& l_;
  const PoolDiffOptions& o_;
  PoolDiff result_;
  std::vector<UpdateCall> calls_;
};

}  // namespace

PoolDiff DiffNodePool(const cloud::NodePool& desired, const cloud::NodePool& live,
                      const PoolDiffOptions& options) {
  return Differ(desired, live, options).Run();
}

}  // namespace tpu::plan
