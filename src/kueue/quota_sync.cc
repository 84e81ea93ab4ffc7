// Reading Nodes and the queue, writing ResourceFlavors and quota.
#include "kueue/quota_sync.h"

#include <sstream>

#include "kube/status_errors.h"
#include "kube/apply_noop.h"

namespace tpu::kueue {
namespace {

constexpr int kMaxAttempts = 5;  // re-reads after concurrent edits of the queue

std::set<std::string> SplitCommas(const std::string& s) {
  std::set<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.insert(item);
  }
  return out;
}

std::string JoinNames(const std::vector<FlavorQuota>& flavors) {
  std::string out;
  for (const auto& f : flavors) out += (out.empty() ? "" : ",") + f.flavor;
  return out;
}

}  // namespace

nlohmann::json MergeResourceGroups(const nlohmann::json& current, const std::vector<FlavorQuota>& flavors,
                                   const std::string& resource, const std::set<std::string>& previously_ours) {
  json groups = current.is_array() ? current : json::array();
  std::map<std::string, const FlavorQuota*> ours;
  for (const auto& f : flavors) ours[f.flavor] = &f;
  std::set<std::string> placed;
  bool found = false;
  json out = json::array();
  for (auto group : groups) {
    json covered = group.value("coveredResources", json::array());
    if (std::find(covered.begin(), covered.end(), resource) == covered.end()) {
      out.push_back(std::move(group));
      continue;
    }
    found = true;
    json kept = json::array();
    for (auto flavor : group.value("flavors", json::array())) {
      const std::string name = flavor.value("name", "");
      auto it = ours.find(name);
      if (it == ours.end()) {
        if (!previously_ours.count(name)) kept.push_back(std::move(flavor));
        continue;
      }
      for (auto& r : flavor["resources"]) {
        if (r.value("name", "") == resource) r["nominalQuota"] = std::to_string(it->second->nominal_quota);
      }
      placed.insert(name);
      kept.push_back(std::move(flavor));
    }
    for (const auto& f : flavors) {
      if (placed.count(f.flavor)) continue;
      // Kueue wants every flavor to list the group's resources in order.
      json resources = json::array();
      for (const auto& r : covered) {
        resources.push_back({{"name", r}, {"nominalQuota", r == resource ? std::to_string(f.nominal_quota) : "0"}});
      }
      kept.push_back({{"name", f.flavor}, {"resources", resources}});
      placed.insert(f.flavor);
    }
    if (!kept.empty()) {
      group["flavors"] = std::move(kept);
      out.push_back(std::move(group));
    }
  }
  if (!found && !flavors.empty()) {
    json kept = json::array();
    for (const auto& f : flavors) {
      kept.push_back({{"name", f.flavor},
                      {"resources", {{{"name", resource}, {"nominalQuota", std::to_string(f.nominal_quota)}}}}});
    }
    out.push_back({{"coveredResources", {resource}}, {"flavors", kept}});
  }
  return out;
}

QuotaSync::QuotaSync(kube::KubeClient& client, KueueConfig config) : client_(client), config_(std::move(config)) {}

Result<KueueVersions> QuotaSync::Versions() {
  if (!versions_) {
    auto v = DiscoverKueue(client_, config_);
    if (!v.ok()) return v.status();
    versions_ = std::move(*v);
  }
  return *versions_;
}

Result<kube::ResourceRef> QuotaSync::Kueue(const kube::ResourceRef& base) {
  auto v = Versions();
  if (!v.ok()) return v.status();
  return v->Ref(base);
}

Result<bool> QuotaSync::ApplyFlavor(const kube::ResourceRef& ref, const FlavorQuota& fq) {
  json rf = {{"apiVersion", ref.ApiVersion()},
             {"kind", "ResourceFlavor"},
             {"metadata", {{"name", fq.flavor}, {"labels", {{"app.kubernetes.io/managed-by", kube::kFieldManager}}}}},
             {"spec",
              {{"nodeLabels",
                {{"cloud.google.com/gke-tpu-accelerator", fq.accelerator},
                 {"cloud.google.com/gke-tpu-topology", fq.topology}}},
               {"tolerations", {{{"key", "google.com/tpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}}}}};
  auto live = client_.Get(ref, "", fq.flavor);
  if (!live.ok() && !kube::IsNotFound(live.status())) return live.status();
  if (live.ok() && kube::ApplyChangesNothing(*live, rf, kube::kFieldManager)) return false;
  auto r = client_.Apply(ref, "", rf);
  if (!r.ok()) return r.status();
  return true;
}

Result<bool> QuotaSync::WriteQueue(const kube::ResourceRef& ref, const std::vector<FlavorQuota>& flavors) {
  const std::string& name = config_.queue_name();
  const std::string managed = JoinNames(flavors);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    auto current = client_.Get(ref, "", name);
    if (!current.ok() && !kube::IsNotFound(current.status())) return current.status();
    if (!current.ok()) {
      // First write: created with an Update, not an apply, so the defaults we
      // give (all namespaces may use the queue) belong to whoever edits them
      // next and later syncs never remove them.
      json obj = {{"apiVersion", ref.ApiVersion()}, {"kind", ref.kind},
                  {"metadata", {{"name", name}, {"annotations", {{kManagedFlavorsAnnotation, managed}}}}},
                  {"spec", {{"resourceGroups", MergeResourceGroups(nullptr, flavors, config_.resource, {})}}}};
      if (!config_.cohort_mode()) obj["spec"]["namespaceSelector"] = json::object();
      auto created = client_.Create(ref, "", obj);
      if (created.ok()) return true;
      if (kube::IsAlreadyExists(created.status())) continue;
      return created.status();
    }
    const json& meta = (*current)["metadata"];
    std::string previous;
    if (meta.contains("annotations")) previous = meta["annotations"].value(kManagedFlavorsAnnotation, "");
    json spec = current->value("spec", json::object());
    json groups = MergeResourceGroups(spec.value("resourceGroups", json::array()), flavors,
                                      config_.resource, SplitCommas(previous));
    if (groups == spec.value("resourceGroups", json::array()) && previous == managed) return false;
    json obj = {{"apiVersion", ref.ApiVersion()}, {"kind", ref.kind},
                {"metadata", {{"name", name}, {"resourceVersion", meta["resourceVersion"]},
                              {"annotations", {{kManagedFlavorsAnnotation, managed}}}}},
                {"spec", {{"resourceGroups", groups}}}};
    auto applied = client_.Apply(ref, "", obj);
    if (applied.ok()) return true;
    if (!kube::IsConflict(applied.status())) return applied.status();
    // Someone changed the queue since we read it: read again.
  }
  return Status::Unavailable("quota sync: " + name + " kept changing under us; will retry");
}

Result<QuotaReport> QuotaSync::Sync(const manifest::Target& target, const std::set<std::string>& excluded) {
  auto versions = Versions();
  if (!versions.ok()) return versions.status();
  const kube::ResourceRef flavor_ref = versions->Ref(kube::resources::kResourceFlavors);
  const kube::ResourceRef queue_ref = versions->Ref(config_.cohort_mode() ? kube::resources::kCohorts : kube::resources::kClusterQueues);
  QuotaReport report;
  report.api_version = queue_ref.ApiVersion();
  kube::ListOptions by_pool;
  by_pool.label_selector = "cloud.google.com/gke-nodepool";
  auto nodes = client_.List(kube::resources::kNodes, "", by_pool);
  if (!nodes.ok()) return nodes.status().WithContext("quota sync: listing nodes");
  report.flavors = ComputeQuota(target, ReadyNodesByPool(nodes->items), config_, excluded);
  for (const auto& fq : report.flavors) {
    auto wrote = ApplyFlavor(flavor_ref, fq);
    if (!wrote.ok()) return wrote.status().WithContext("quota sync: flavor " + fq.flavor);
    ++(*wrote ? report.writes : report.skipped_writes);
  }
  auto wrote = WriteQueue(queue_ref, report.flavors);
  if (!wrote.ok()) return wrote.status().WithContext("quota sync: " + queue_ref.kind + " " + config_.queue_name());
  report.wrote_queue = *wrote;
  ++(*wrote ? report.writes : report.skipped_writes);
  return report;
}

}  // namespace tpu::kueue
