// Writing and removing the DWS objects and the queue's rule; see flex_start_sync.h.
#include "kueue/flex_start_sync.h"

#include "kube/apply_noop.h"
#include "kube/status_errors.h"
#include "kueue/flex_start.h"
#include "kueue/versions.h"

namespace tpu::kueue {
namespace {

constexpr int kRuleAttempts = 5;  // re-reads after concurrent edits of a v1beta1 queue

json RulesOf(const json& queue) {
  if (!queue.contains("spec") || !queue["spec"].contains("admissionChecksStrategy")) return json::array();
  return queue["spec"]["admissionChecksStrategy"].value("admissionChecks", json::array());
}

bool HasOurRule(const json& rules) {
  for (const auto& r : rules)
    if (r.value("name", "") == kFlexStartCheck) return true;
  return false;
}

}  // namespace

Status FlexStartSync::Discover() {
  if (config_ref_ && check_ref_) return Status::OK();
  auto config = DiscoverKueueResource(client_, kube::resources::kProvisioningRequestConfigs);
  if (!config.ok()) return config.status();
  auto check = DiscoverKueueResource(client_, kube::resources::kAdmissionChecks);
  if (!check.ok()) return check.status();
  config_ref_ = *config;
  check_ref_ = *check;
  return Status::OK();
}

Result<bool> FlexStartSync::ApplyObject(const kube::ResourceRef& ref, const json& obj) {
  const std::string name = obj["metadata"]["name"];
  auto live = client_.Get(ref, "", name);
  if (!live.ok() && !kube::IsNotFound(live.status())) return live.status();
  if (live.ok() && kube::ApplyChangesNothing(*live, obj, kube::kFieldManager)) return false;
  auto r = client_.Apply(ref, "", obj);
  if (!r.ok()) return r.status();
  return true;
}

Status FlexStartSync::WriteRule(const std::vector<std::string>& flavors, FlexStartReport* report) {
  auto ref = quota_.Kueue(kube::resources::kClusterQueues);
  if (!ref.ok()) return ref.status();
  const std::string& name = quota_.config().cluster_queue;
  const kube::ApplyOptions as_rule{kFlexStartFieldManager, true, ""};
  for (int attempt = 0; attempt < kRuleAttempts; ++attempt) {
    auto queue = client_.Get(*ref, "", name);
    if (!queue.ok()) return queue.status().WithContext("ClusterQueue " + name);
    const json rules = RulesOf(*queue);
    const json spec = queue->value("spec", json::object());
    if (!flavors.empty() && !spec.value("admissionChecks", json::array()).empty()) {
      report->unattached_reason = "ClusterQueue " + name + " lists spec.admissionChecks, and Kueue allows no "
                                  "admissionChecksStrategy beside it: add " + std::string(kFlexStartCheck) +
                                  " there yourself, or move your checks to spec.admissionChecksStrategy";
      return Status::OK();
    }
    const json merged = MergeCheckRules(rules, flavors);
    report->attached = !flavors.empty();
    if (merged == rules) return Status::OK();
    if (flavors.empty() && !HasOurRule(rules)) return Status::OK();
    json obj = {{"apiVersion", ref->ApiVersion()}, {"kind", "ClusterQueue"}, {"metadata", {{"name", name}}}};
    if (ref->version == "v1beta1") {
      // Atomic list: the whole of it, guarded by the version we read.
      obj["metadata"]["resourceVersion"] = (*queue)["metadata"]["resourceVersion"];
      if (!merged.empty()) obj["spec"] = {{"admissionChecksStrategy", {{"admissionChecks", merged}}}};
    } else if (!flavors.empty()) {
      // A map keyed by name: our rule alone; applying none removes it.
      obj["spec"] = {{"admissionChecksStrategy", {{"admissionChecks", {FlexStartRule(flavors)}}}}};
    }
    auto applied = client_.Apply(*ref, "", obj, as_rule);
    if (applied.ok()) {
      ++report->writes;
      return Status::OK();
    }
    if (!kube::IsConflict(applied.status())) return applied.status().WithContext("ClusterQueue " + name);
  }
  return Status::Unavailable("flex-start: ClusterQueue " + name + " kept changing under us; will retry");
}

Status FlexStartSync::DeleteOurs(FlexStartReport* report) {
  for (const auto& [ref, name] : {std::pair{*check_ref_, kFlexStartCheck}, std::pair{*config_ref_, kFlexStartConfig}}) {
    auto live = client_.Get(ref, "", name);
    if (!live.ok() && kube::IsNotFound(live.status())) continue;
    if (!live.ok()) return live.status();
    if (!ManagedByUs(*live)) continue;  // someone else's object of that name
    Status s = client_.Delete(ref, "", name);
    if (!s.ok() && !kube::IsNotFound(s)) return s.WithContext(ref.kind + " " + name);
    ++report->writes;
  }
  return Status::OK();
}

Result<FlexStartReport> FlexStartSync::Sync(const manifest::Target& target) {
  FlexStartReport report;
  const KueueConfig& config = quota_.config();
  report.flavors = FlexStartFlavors(target, config);
  if (Status s = Discover(); !s.ok()) {
    // Without the DWS kinds there is nothing to keep, unless git asks for it.
    if (report.flavors.empty()) return report;
    return s.WithContext("flex-start");
  }
  const bool wanted = !report.flavors.empty() && !config.cohort_mode();
  if (!report.flavors.empty() && config.cohort_mode())
    report.unattached_reason = "spec.kueue.cohort: no ClusterQueue of ours to attach the flex-start admission "
                               "check to; attach " + std::string(kFlexStartCheck) +
                               " to your ClusterQueues yourself, or use spec.kueue.clusterQueue";
  if (wanted) {
    for (const json& obj : {ProvisioningRequestConfigObject(*config_ref_, config), AdmissionCheckObject(*check_ref_)}) {
      const kube::ResourceRef& ref = obj["kind"] == "AdmissionCheck" ? *check_ref_ : *config_ref_;
      auto wrote = ApplyObject(ref, obj);
      if (!wrote.ok()) return wrote.status().WithContext("flex-start: " + ref.kind);
      if (*wrote) ++report.writes;
    }
  }
  if (!config.cohort_mode()) {
    if (Status s = WriteRule(wanted ? report.flavors : std::vector<std::string>{}, &report); !s.ok())
      return s.WithContext("flex-start");
  }
  if (!wanted) {
    if (Status s = DeleteOurs(&report); !s.ok()) return s.WithContext("flex-start");
  }
  return report;
}

}  // namespace tpu::kueue
