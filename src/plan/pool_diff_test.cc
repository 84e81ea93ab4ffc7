// Table-driven node pool diff tests: one case per field and rule, starting
// from a pool GKE reports "in sync" (its defaults and spellings applied), with
// the no-flap cases that must yield no action.
#include "plan/pool_diff.h"

#include <functional>

#include <gtest/gtest.h>

#include "plan/desired.h"
#include "plan/field_text.h"
#include "plan/ownership.h"
#include "plan/plan_test_util.h"

namespace tpu::plan {
namespace {

using testing::AsReported;
using testing::MakePool;
using testing::MakeTarget;

enum class Base { kSingleHost, kMultiHost, kV7x };

struct Case {
  const char* name;
  Base base;
  std::function<void(manifest::TPUNodePool&)> spec;  // the manifest's change
  std::function<void(cloud::NodePool&)> live;        // what else GKE reports
  ActionKind kind;
  std::vector<std::string> paths;
  std::vector<UpdateCall> calls = {};
};

void Nothing(manifest::TPUNodePool&) {}
void Same(cloud::NodePool&) {}

manifest::TPUNodePool BasePool(Base b) {
  switch (b) {
    case Base::kSingleHost: return MakePool("serve", "v6e", "2x2");
    case Base::kMultiHost: return MakePool("train", "v5p", "2x2x4");
    case Base::kV7x: return MakePool("big", "v7x", "4x4x4");
  }
  return {};
}

// Server defaults and spellings: nothing to do.
std::vector<Case> NoFlapCases() {
  using K = ActionKind;
  return {
    // --- no flap: server defaults and spellings ---
    {"in_sync_single_host", Base::kSingleHost, Nothing, Same, K::kNoop, {}},
    {"in_sync_multi_host", Base::kMultiHost, Nothing, Same, K::kNoop, {}},
    {"tpu7x_reported_without_placement_type", Base::kV7x, Nothing, Same, K::kNoop, {}},
    {"label_maps_with_system_labels", Base::kSingleHost,
     [](auto& s) { s.node_config.labels = cloud::StringMap{{"b", "2"}, {"a", "1"}}; }, Same, K::kNoop, {}},
    {"taints_reordered_and_respelled", Base::kSingleHost,
     [](auto& s) {
       s.node_config.taints = std::vector<manifest::Taint>{{"x", "1", "NoSchedule"}, {"a", "2", "NoExecute"}};
     },
     Same, K::kNoop, {}},
    {"spot_taint_added_by_gke", Base::kSingleHost,
     [](auto& s) {
       s.capacity.type = manifest::CapacityType::kSpot;
       s.node_config.taints = std::vector<manifest::Taint>{{"x", "1", "NoSchedule"}};
     },
     [](auto& l) {
       l.spot = true;
       l.taints = std::vector<cloud::NodeTaint>{{"cloud.google.com/gke-spot", "true", "NO_SCHEDULE"},
                                                {"x", "1", "NoSchedule"}};
     },
     K::kNoop, {}},
    {"tpu_taint_added_by_gke", Base::kSingleHost, Nothing,
     [](auto& l) { l.taints = std::vector<cloud::NodeTaint>{{"google.com/tpu", "present", "NO_SCHEDULE"}}; },
     K::kNoop, {}},
    {"disk_type_default_pd_balanced", Base::kSingleHost, [](auto& s) { s.node_config.disk_type = "pd-balanced"; },
     [](auto& l) { l.disk_type.reset(); }, K::kNoop, {}},
    {"disk_type_unset_not_compared", Base::kSingleHost, Nothing,
     [](auto& l) { l.disk_type = "hyperdisk-balanced"; }, K::kNoop, {}},
    {"disk_size_default_100", Base::kSingleHost, [](auto& s) { s.node_config.disk_size_gb = 100; },
     [](auto& l) { l.disk_size_gb.reset(); }, K::kNoop, {}},
    {"scopes_short_vs_long_and_reordered", Base::kSingleHost,
     [](auto& s) { s.node_config.oauth_scopes = std::vector<std::string>{"cloud-platform", "userinfo.email"}; },
     Same, K::kNoop, {}},
    {"version_prefix", Base::kSingleHost, [](auto& s) { s.version = "1.30"; }, Same, K::kNoop, {}},
    {"image_type_case", Base::kSingleHost, [](auto& s) { s.node_config.image_type = "cos_containerd"; }, Same,
     K::kNoop, {}},
    {"reservation_as_path_of_own_project", Base::kSingleHost,
     [](auto& s) {
       s.capacity.type = manifest::CapacityType::kReservation;
       s.capacity.reservation = "res-a";
     },
     [](auto& l) {
       l.reservation_affinity = cloud::ReservationAffinity{
           "SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name", {"projects/p/reservations/res-a"}};
     },
     K::kNoop, {}},
    {"no_reservation_reported_as_any", Base::kSingleHost, Nothing,
     [](auto& l) { l.reservation_affinity = cloud::ReservationAffinity{"ANY_RESERVATION", "", {}}; }, K::kNoop, {}},
    {"metadata_default_key_ignored", Base::kSingleHost,
     [](auto& s) { s.node_config.metadata = cloud::StringMap{{"a", "b"}}; }, Same, K::kNoop, {}},
    {"undeclared_resource_labels_kept", Base::kSingleHost, Nothing,
     [](auto& l) { (*l.resource_labels)["cost-center"] = "42"; }, K::kNoop, {}},
    {"service_account_default", Base::kSingleHost, [](auto& s) { s.node_config.service_account = "default"; },
     [](auto& l) { l.service_account.reset(); }, K::kNoop, {}},
    {"autoscaled_size_not_compared", Base::kSingleHost,
     [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 1, 4}; },
     [](auto& l) {
       l.autoscaling = cloud::NodePoolAutoscaling{true, 1, 4, ""};
       l.node_count = 3;
     },
     K::kNoop, {}},
    {"autoscaling_disabled_reported_empty", Base::kSingleHost, Nothing, [](auto& l) { l.autoscaling.reset(); },
     K::kNoop, {}},
    {"locations_unreported", Base::kSingleHost, Nothing, [](auto& l) { l.locations.clear(); }, K::kNoop, {}},
    {"management_left_out_not_compared", Base::kSingleHost, Nothing,
     [](auto& l) { l.management = cloud::NodeManagement{false, false}; }, K::kNoop, {}},
    {"location_policy_left_to_gke", Base::kSingleHost,
     [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 1, 4}; },
     [](auto& l) { l.autoscaling->location_policy = "BALANCED"; }, K::kNoop, {}},
    {"autoscaled_slice_size_not_compared", Base::kMultiHost,
     [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 0, 4}; },
     [](auto& l) { l.node_count = 0; }, K::kNoop, {}},

  };
}

// Changes GKE makes in place.
std::vector<Case> InPlaceCases() {
  using K = ActionKind;
  using U = UpdateCall;
  return {
    // --- in place ---
    {"label_changed", Base::kSingleHost, [](auto& s) { s.node_config.labels = cloud::StringMap{{"team", "b"}}; },
     [](auto& l) { (*l.labels)["team"] = "a"; }, K::kUpdate, {"config.labels[\"team\"]"}, {U::kUpdateNodePool}},
    {"label_removed", Base::kSingleHost, [](auto& s) { s.node_config.labels = cloud::StringMap{}; },
     [](auto& l) { (*l.labels)["old"] = "x"; }, K::kUpdate, {"config.labels[\"old\"]"}, {U::kUpdateNodePool}},
    {"taint_changed", Base::kSingleHost,
     [](auto& s) { s.node_config.taints = std::vector<manifest::Taint>{{"x", "1", "NoExecute"}}; },
     [](auto& l) { l.taints = std::vector<cloud::NodeTaint>{{"x", "1", "NO_SCHEDULE"}}; }, K::kUpdate,
     {"config.taints"}, {U::kUpdateNodePool}},
    {"resource_label_changed", Base::kSingleHost,
     [](auto& s) { s.node_config.resource_labels = cloud::StringMap{{"team", "b"}}; },
     [](auto& l) { (*l.resource_labels)["team"] = "a"; }, K::kUpdate, {"config.resourceLabels[\"team\"]"},
     {U::kUpdateNodePool}},
    {"declared_resource_labels_remove_extra", Base::kSingleHost,
     [](auto& s) { s.node_config.resource_labels = cloud::StringMap{}; },
     [](auto& l) { (*l.resource_labels)["cost-center"] = "42"; }, K::kUpdate,
     {"config.resourceLabels[\"cost-center\"]"}, {U::kUpdateNodePool}},
    {"ownership_marker_missing", Base::kSingleHost, Nothing,
     [](auto& l) { l.resource_labels->erase(cloud::kManagedLabel); }, K::kUpdate,
     {"config.resourceLabels[\"tpu-provisioner-managed\"]"}, {U::kUpdateNodePool}},
    {"prevent_destroy_annotation_added", Base::kSingleHost,
     [](auto& s) { s.annotations.prevent_destroy = true; }, Same, K::kUpdate,
     {"config.resourceLabels[\"tpu-provisioner-prevent-destroy\"]"}, {U::kUpdateNodePool}},
    {"tags_changed", Base::kSingleHost, [](auto& s) { s.node_config.tags = std::vector<std::string>{"b", "a"}; },
     [](auto& l) { l.tags = std::vector<std::string>{"a"}; }, K::kUpdate, {"config.tags"}, {U::kUpdateNodePool}},
    {"tags_reordered", Base::kSingleHost, [](auto& s) { s.node_config.tags = std::vector<std::string>{"b", "a"}; },
     [](auto& l) { l.tags = std::vector<std::string>{"a", "b"}; }, K::kNoop, {}},
    {"image_type_changed", Base::kSingleHost, [](auto& s) { s.node_config.image_type = "UBUNTU_CONTAINERD"; },
     Same, K::kUpdate, {"config.imageType"}, {U::kUpdateNodePool}},
    {"version_changed", Base::kSingleHost, [](auto& s) { s.version = "1.31"; }, Same, K::kUpdate, {"version"},
     {U::kUpdateNodePool}},
    {"auto_repair_changed", Base::kSingleHost,
     [](auto& s) { s.management = manifest::Management{false, std::nullopt, {}}; }, Same, K::kUpdate,
     {"management.autoRepair"}, {U::kSetManagement}},
    {"auto_upgrade_changed", Base::kMultiHost,
     [](auto& s) { s.management = manifest::Management{std::nullopt, false, {}}; }, Same, K::kUpdate,
     {"management.autoUpgrade"}, {U::kSetManagement}},
    // UpdateNodePoolRequest migrates the nodes to a new disk: no replace.
    {"disk_size", Base::kSingleHost, [](auto& s) { s.node_config.disk_size_gb = 200; }, Same, K::kUpdate,
     {"config.diskSizeGb"}, {U::kUpdateNodePool}},
    {"disk_type", Base::kSingleHost, [](auto& s) { s.node_config.disk_type = "hyperdisk-balanced"; }, Same,
     K::kUpdate, {"config.diskType"}, {U::kUpdateNodePool}},
    {"disk_and_label", Base::kMultiHost,
     [](auto& s) {
       s.node_config.labels = cloud::StringMap{{"team", "b"}};
       s.node_config.disk_size_gb = 300;
     },
     Same, K::kUpdate, {"config.diskSizeGb", "config.labels[\"team\"]"}, {U::kUpdateNodePool}},
    // The zones move in place, in a call of their own, after the others.
    {"locations", Base::kSingleHost,
     [](auto& s) {
       s.location = "us-central2-a";
       s.node_config.labels = cloud::StringMap{{"team", "b"}};
     },
     Same, K::kUpdate, {"locations", "config.labels[\"team\"]"}, {U::kUpdateNodePool, U::kUpdateLocations}},
    // A fixed slice becomes 0 ↔ its VMs in place.
    {"slice_becomes_autoscaled", Base::kMultiHost,
     [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 0, 4}; }, Same, K::kUpdate, {"autoscaling"},
     {U::kSetAutoscaling}},
    {"autoscaling_enabled", Base::kSingleHost, [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 1, 4}; },
     Same, K::kUpdate, {"autoscaling"}, {U::kSetAutoscaling}},
    {"autoscaling_bounds", Base::kSingleHost, [](auto& s) { s.autoscaling = manifest::Autoscaling{true, 1, 8}; },
     [](auto& l) { l.autoscaling = cloud::NodePoolAutoscaling{true, 1, 4, ""}; }, K::kUpdate, {"autoscaling"},
     {U::kSetAutoscaling}},
    {"label_and_size", Base::kSingleHost,
     [](auto& s) {
       s.node_config.labels = cloud::StringMap{{"team", "b"}};
       s.node_count = 2;
     },
     [](auto& l) { (*l.labels)["team"] = "a"; }, K::kUpdate, {"config.labels[\"team\"]", "nodeCount"},
     {U::kUpdateNodePool, U::kSetSize}},

  };
}

// Resizes, and changes only a new pool can make.
std::vector<Case> ResizeAndReplaceCases() {
  using K = ActionKind;
  using U = UpdateCall;
  return {
    // --- resize ---
    {"single_host_node_count", Base::kSingleHost, [](auto& s) { s.node_count = 3; }, Same, K::kResize,
     {"nodeCount"}, {U::kSetSize}},
    {"single_host_drifted_size", Base::kSingleHost, Nothing, [](auto& l) { l.node_count = 5; }, K::kResize,
     {"nodeCount"}, {U::kSetSize}},

    // --- replace ---
    {"machine_type", Base::kSingleHost, Nothing, [](auto& l) { l.machine_type = "ct6e-standard-8t"; },
     K::kReplace, {"config.machineType"}},
    {"service_account", Base::kSingleHost, [](auto& s) { s.node_config.service_account = "sa@p.iam"; }, Same,
     K::kReplace, {"config.serviceAccount"}},
    {"oauth_scopes", Base::kSingleHost,
     [](auto& s) { s.node_config.oauth_scopes = std::vector<std::string>{"cloud-platform"}; }, Same, K::kReplace,
     {"config.oauthScopes"}},
    {"metadata", Base::kSingleHost, [](auto& s) { s.node_config.metadata = cloud::StringMap{{"a", "b"}}; },
     [](auto& l) { (*l.metadata)["a"] = "c"; }, K::kReplace, {"config.metadata[\"a\"]"}},
    {"spot", Base::kSingleHost, [](auto& s) { s.capacity.type = manifest::CapacityType::kSpot; }, Same,
     K::kReplace, {"config.spot"}},
    {"reservation", Base::kMultiHost,
     [](auto& s) {
       s.capacity.type = manifest::CapacityType::kReservation;
       s.capacity.reservation = "res-b";
     },
     Same, K::kReplace, {"config.reservationAffinity"}},
    {"reservation_other_project", Base::kMultiHost,
     [](auto& s) {
       s.capacity.type = manifest::CapacityType::kReservation;
       s.capacity.reservation = "res-a";
       s.capacity.reservation_project = "shared";
     },
     [](auto& l) {
       l.reservation_affinity = cloud::ReservationAffinity{
           "SPECIFIC_RESERVATION", "compute.googleapis.com/reservation-name", {"res-a"}};
     },
     K::kReplace, {"config.reservationAffinity"}},
    {"flex_start", Base::kMultiHost,
     [](auto& s) {
       s.capacity.type = manifest::CapacityType::kFlexStart;
       s.autoscaling = manifest::Autoscaling{true, 0, 4};  // as the loader sets it
     },
     Same, K::kReplace, {"config.flexStart", "management.autoRepair", "autoscaling"}},
    // An autoscaled slice at 0 nodes cannot become a fixed one but by a new pool.
    {"autoscaled_slice_at_zero_becomes_fixed", Base::kMultiHost, Nothing,
     [](auto& l) {
       l.autoscaling = cloud::NodePoolAutoscaling{true, 0, 4, "ANY"};
       l.node_count = 0;
     },
     K::kReplace, {"nodeCount", "autoscaling"}},
    {"placement_topology", Base::kMultiHost, Nothing,
     [](auto& l) { l.placement_policy->tpu_topology = "2x2x2"; }, K::kReplace, {"placementPolicy.tpuTopology"}},
    {"placement_type", Base::kMultiHost, Nothing, [](auto& l) { l.placement_policy->type = ""; }, K::kReplace,
     {"placementPolicy.type"}},
    {"placement_policy_name", Base::kV7x, [](auto& s) { s.workload_policy = "other-wp"; }, Same, K::kReplace,
     {"placementPolicy.policyName"}},
    {"placement_on_single_host", Base::kSingleHost, Nothing,
     [](auto& l) { l.placement_policy = cloud::PlacementPolicy{"COMPACT", "2x2", ""}; }, K::kReplace,
     {"placementPolicy"}},
    {"multi_host_node_count", Base::kMultiHost, Nothing, [](auto& l) { l.node_count = 3; }, K::kReplace,
     {"nodeCount"}},
    {"replace_wins_over_update", Base::kSingleHost,
     [](auto& s) {
       s.node_config.labels = cloud::StringMap{{"team", "b"}};
       s.node_config.service_account = "sa@p.iam";
     },
     Same, K::kReplace, {"config.serviceAccount", "config.labels[\"team\"]"}},
  };
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> all;
    for (auto part : {NoFlapCases, InPlaceCases, ResizeAndReplaceCases})
      for (auto& c : part()) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class PoolDiffTest : public ::testing::TestWithParam<Case> {};

TEST_P(PoolDiffTest, Classifies) {
  const Case& c = GetParam();
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = BasePool(c.base);
  // A no-flap case declares the field on both sides: the live pool was created
  // from the same manifest and GKE reports it its own way.
  if (c.kind == ActionKind::kNoop) c.spec(spec);
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  c.live(live);
  if (c.kind != ActionKind::kNoop) c.spec(spec);
  cloud::NodePool desired = DesiredNodePool(target, spec, 0);
  PoolDiff d = DiffNodePool(desired, live,
                            {spec.shape.multi_host, spec.node_config.resource_labels.has_value(), "p"});
  std::vector<std::string> paths;
  for (const auto& ch : d.changes) paths.push_back(ch.path);
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> want = c.paths;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ActionKindName(d.kind), std::string(ActionKindName(c.kind)));
  EXPECT_EQ(paths, want);
  EXPECT_EQ(d.update_calls, c.calls);
}

INSTANTIATE_TEST_SUITE_P(Fields, PoolDiffTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(PoolDiffTest, ChangeTextShowsBeforeAndAfter) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("serve", "v6e", "2x2");
  spec.node_config.labels = cloud::StringMap{{"team", "b"}};
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  (*live.labels)["team"] = "a";
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0], (FieldChange{"config.labels[\"team\"]", "\"a\"", "\"b\"", false}));
}

// Keys added, changed, removed and left alone, interleaved: one change per
// differing key, in key order, with quoted texts; system labels never removed.
TEST(PoolDiffTest, MapChangesAreInKeyOrder) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("serve", "v6e", "2x2");
  spec.node_config.labels = cloud::StringMap{{"b", "same"}, {"c", "new\"q"}, {"e", "2"}};
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  live.labels->erase("c");
  (*live.labels)["a"] = "gone";
  (*live.labels)["e"] = "1";
  (*live.labels)["f"] = "gone too";
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  std::vector<FieldChange> want = {
      {"config.labels[\"a\"]", "\"gone\"", kUnset, false},
      {"config.labels[\"c\"]", kUnset, "\"new\\\"q\"", false},
      {"config.labels[\"e\"]", "\"1\"", "\"2\"", false},
      {"config.labels[\"f\"]", "\"gone too\"", kUnset, false},
  };
  EXPECT_EQ(d.changes, want);
}

TEST(PoolDiffTest, UpdateBodyKeepsWhatIsNotCompared) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("serve", "v6e", "2x2");
  spec.node_config.labels = cloud::StringMap{{"team", "b"}};
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  (*live.resource_labels)["cost-center"] = "42";
  (*live.labels)["team"] = "a";
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  ASSERT_TRUE(d.body.resource_labels);
  EXPECT_EQ(d.body.resource_labels->at("cost-center"), "42");
  EXPECT_EQ(d.body.resource_labels->at("goog-gke-node-pool-provisioning-model"), "on-demand");
  EXPECT_EQ(d.body.resource_labels->at(cloud::kManagedLabel), "true");
  EXPECT_EQ(d.body.labels->at("team"), "b");
  EXPECT_EQ(d.body.labels->at("cloud.google.com/gke-nodepool"), "serve-0");
}

TEST(PoolDiffTest, UpdateBodyNamesVersionOnlyWhenItChanges) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("serve", "v6e", "2x2");
  spec.version = "1.30";
  spec.node_config.image_type = "COS_CONTAINERD";
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  spec.node_config.labels = cloud::StringMap{{"team", "b"}};
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  EXPECT_EQ(d.kind, ActionKind::kUpdate);
  EXPECT_FALSE(d.body.version) << "a label change must not upgrade the nodes";
  EXPECT_FALSE(d.body.image_type);
  spec.version = "1.31";
  d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  EXPECT_EQ(d.body.version, "1.31");
}

// The body sends a disk only when it changes: each migrates every node.
TEST(PoolDiffTest, UpdateBodyNamesTheDiskOnlyWhenItChanges) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("serve", "v6e", "2x2");
  spec.node_config.disk_size_gb = 200;
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  spec.node_config.labels = cloud::StringMap{{"team", "b"}};
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  EXPECT_EQ(d.kind, ActionKind::kUpdate);
  EXPECT_FALSE(d.body.disk_size_gb);
  spec.node_config.disk_size_gb = 300;
  d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {false, false, "p"});
  EXPECT_EQ(d.body.disk_size_gb, 300);
}

// A replace gives TPU capacity up: it says which fields force it and why.
TEST(PoolDiffTest, AReplaceSaysWhy) {
  manifest::Target target = MakeTarget();
  manifest::TPUNodePool spec = MakePool("train", "v5p", "2x2x4");
  cloud::NodePool live = AsReported(DesiredNodePool(target, spec, 0));
  spec.capacity.type = manifest::CapacityType::kSpot;
  live.placement_policy->tpu_topology = "2x2x2";
  PoolDiff d = DiffNodePool(DesiredNodePool(target, spec, 0), live, {true, false, "p"});
  EXPECT_EQ(d.kind, ActionKind::kReplace);
  EXPECT_EQ(d.replace_reason,
            "replaced because config.spot, placementPolicy.tpuTopology cannot change in place (the capacity "
            "type is fixed when a pool is created; a TPU slice's shape is fixed when its pool is created); the "
            "new pool must obtain its TPU capacity again");
}

}  // namespace
}  // namespace tpu::plan
