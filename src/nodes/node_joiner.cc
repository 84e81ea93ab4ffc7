// NodeJoiner: see node_joiner.h.
#include "nodes/node_joiner.h"

#include <optional>
#include <set>

#include "kube/resource.h"
#include "kube/status_errors.h"
#include "nodes/bootstrap_token.h"
#include "nodes/cluster_info.h"
#include "nodes/instance_keys.h"
#include "plan/node_labels.h"

namespace tpu::nodes {
namespace {

namespace res = kube::resources;

// A token this close to its expiry is replaced rather than handed out.
constexpr int64_t kTokenMarginSeconds = 60;

std::string ProviderId(const std::string& project, const std::string& zone, const std::string& instance) {
  return "gce://" + project + "/" + zone + "/" + instance;
}

bool NodeReady(const nlohmann::json& node) {
  for (const auto& c : node.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array()))
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

// A failed Secret create's status with the token's secret half blotted out,
// in case an error message ever echoes what it was sent (the Compute client
// does the same for the metadata it sends).
Status Redacted(const Status& s, const std::string& secret) {
  if (s.ok() || secret.empty() || s.message().find(secret) == std::string::npos) return s;
  std::string m = s.message();
  for (size_t at; (at = m.find(secret)) != std::string::npos;) m.replace(at, secret.size(), "<redacted>");
  return Status::Unavailable(m);
}

std::string NameOf(const nlohmann::json& obj) {
  return obj.value("metadata", nlohmann::json::object()).value("name", "");
}

}  // namespace

struct NodeJoiner::Pass {
  std::map<std::string, nlohmann::json> nodes;  // by spec.providerID
  std::vector<nlohmann::json> labelled;         // Nodes carrying the node-group label
  std::map<std::string, std::vector<TokenSecret>> tokens;  // by instance
  std::set<std::string> live;                   // providerIDs of the instances listed
  std::optional<Result<ClusterInfo>> info;      // read once, when a token is first needed
};

void NodeJoiner::Note(GroupNodeStatus& status, const Status& s) {
  if (s.ok()) return;
  ++counters_.errors;
  if (status.last_error.empty()) status.last_error = s.ToString();
}

std::vector<GroupNodeStatus> NodeJoiner::Sync(const std::string& project, const std::vector<JoinGroup>& groups) {
  std::vector<GroupNodeStatus> out(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    out[i].name = groups[i].name;
    out[i].requested = groups[i].requested;
  }
  Pass pass;
  auto nodes = kube_.List(res::kNodes, "", {});
  kube::ListOptions ours;
  ours.label_selector = kGroupLabel;
  auto secrets = kube_.List(res::kSecrets, "kube-system", ours);
  if (!nodes.ok() || !secrets.ok()) {
    quiet_ = false;
    const Status s = !nodes.ok() ? nodes.status() : secrets.status();
    for (auto& st : out) Note(st, s);
    return out;
  }
  for (auto& n : nodes->items) {
    const std::string id = n.value("spec", nlohmann::json::object()).value("providerID", "");
    if (n["metadata"].value("labels", nlohmann::json::object()).contains(plan::kNodeGroupLabel))
      pass.labelled.push_back(n);
    if (!id.empty()) pass.nodes[id] = std::move(n);
  }
  std::set<std::string> wanted_groups;
  for (const auto& g : groups) wanted_groups.insert(g.name);
  GroupNodeStatus orphans;
  for (const auto& s : secrets->items) {
    auto t = ReadBootstrapSecret(s);
    if (!t) continue;
    // A group gone from git takes its tokens with it.
    if (!wanted_groups.count(t->group)) {
      Note(orphans, kube_.Delete(res::kSecrets, "kube-system", t->name));
      continue;
    }
    pass.tokens[t->instance].push_back(std::move(*t));
  }
  quiet_ = groups.empty() && pass.labelled.empty() && secrets->items.empty();
  for (size_t i = 0; i < groups.size(); ++i) SyncGroup(pass, groups[i], out[i]);
  DeleteStaleNodes(pass, project);
  return out;
}

void NodeJoiner::SyncGroup(Pass& pass, const JoinGroup& group, GroupNodeStatus& status) {
  auto vms = compute_.ListManagedInstances(group.project, group.zone, group.mig);
  if (!vms.ok()) {
    if (vms.error().not_found()) status.phase = "Absent";
    else Note(status, vms.status());
    return;
  }
  std::set<std::string> listed;
  for (const auto& vm : *vms) {
    listed.insert(vm.name);
    ++status.instances;
    if (vm.instance_status == "RUNNING") ++status.running;
    if (!vm.errors.empty() && status.reason.empty()) {
      status.reason = "InstancesCreationFailed";
      status.message = "the MIG failed to create instances: " + vm.errors.front();
    }
    const std::string id = ProviderId(group.project, group.zone, vm.name);
    pass.live.insert(id);
    auto node = pass.nodes.find(id);
    if (node != pass.nodes.end()) {
      ++status.joined;
      if (NodeReady(node->second)) ++status.ready;
      LabelNode(node->second, group, status);
      if (pass.tokens.count(vm.name)) Revoke(pass, group, vm.name, status);
    } else if (vm.instance_status == "RUNNING" && group.bootstrap) {
      JoinInstance(pass, group, vm, status);
    }
  }
  // Tokens of VMs the group no longer has (scaled down, recreated).
  for (auto it = pass.tokens.begin(); it != pass.tokens.end();) {
    bool ours = !it->second.empty() && it->second.front().group == group.name;
    if (!ours || listed.count(it->first)) {
      ++it;
      continue;
    }
    for (const auto& t : it->second) Note(status, kube_.Delete(res::kSecrets, "kube-system", t.name));
    it = pass.tokens.erase(it);
  }
  if (!status.reason.empty()) status.phase = "Failed";
  else if (status.instances < status.requested || status.running < status.instances) status.phase = "Provisioning";
  else if (status.ready < status.instances) status.phase = "Joining";
  else status.phase = "Ready";
}

void NodeJoiner::JoinInstance(Pass& pass, const JoinGroup& group, const cloud::ManagedInstance& vm,
                              GroupNodeStatus& status) {
  const InstanceRef ref{group.project, group.zone, vm.name};
  const int64_t now = now_s_();
  std::optional<BootstrapToken> token;
  auto& held = pass.tokens[vm.name];
  for (auto it = held.begin(); it != held.end();) {
    if (it->expires_s > now + kTokenMarginSeconds && !token) {
      token = it->token;
      ++it;
      continue;
    }
    // Expired (or a second one, which a crash between two passes can leave):
    // off the VM first, so the script never reads a token that no longer works.
    auto cleared = UpdateInstanceMetadata(compute_, ref, {}, {kJoinTokenKey, kControlPlaneKey, kCaHashKey});
    if (!cleared.ok() && cleared.status().code() != Status::Code::kNotFound) Note(status, cleared.status());
    Note(status, kube_.Delete(res::kSecrets, "kube-system", it->name));
    ++counters_.tokens_expired;
    it = held.erase(it);
  }
  if (!pass.info) {
    auto cm = kube_.Get(res::kConfigMaps, "kube-public", "cluster-info");
    pass.info = cm.ok() ? ReadClusterInfo(*cm) : Result<ClusterInfo>(cm.status());
  }
  if (!pass.info->ok()) return Note(status, pass.info->status());
  if (!token) {
    BootstrapToken fresh = NewBootstrapToken();
    auto created = kube_.Create(res::kSecrets, "kube-system",
                                BootstrapSecret(fresh, group.name, vm.name, now + kTokenLifetimeSeconds));
    if (!created.ok()) return Note(status, Redacted(created.status(), fresh.secret));
    ++counters_.tokens_issued;
    held.push_back({"bootstrap-token-" + fresh.id, group.name, vm.name, fresh, now + kTokenLifetimeSeconds});
    token = fresh;
  }
  const ClusterInfo& info = **pass.info;
  const std::string control_plane = group.control_plane.empty() ? info.server : group.control_plane;
  auto set = UpdateInstanceMetadata(
      compute_, ref, {{kJoinTokenKey, token->Value()}, {kControlPlaneKey, control_plane}, {kCaHashKey, info.ca_hash}},
      {});
  Note(status, set.status());  // the client redacts the values it sent from its errors
}

void NodeJoiner::Revoke(Pass& pass, const JoinGroup& group, const std::string& instance, GroupNodeStatus& status) {
  auto cleared = UpdateInstanceMetadata(compute_, {group.project, group.zone, instance}, {},
                                        {kJoinTokenKey, kControlPlaneKey, kCaHashKey});
  if (!cleared.ok()) return Note(status, cleared.status());  // the Secret stays until the keys are off
  for (const auto& t : pass.tokens[instance]) {
    Status s = kube_.Delete(res::kSecrets, "kube-system", t.name);
    if (s.ok() || kube::IsNotFound(s)) ++counters_.tokens_revoked;
    else Note(status, s);
  }
  pass.tokens.erase(instance);
}

void NodeJoiner::LabelNode(const nlohmann::json& node, const JoinGroup& group, GroupNodeStatus& status) {
  const auto& have = node["metadata"].value("labels", nlohmann::json::object());
  nlohmann::json patch = nlohmann::json::object();
  for (const auto& [k, v] : group.labels)
    if (have.value(k, "") != v) patch[k] = v;
  if (patch.empty()) return;
  auto r = kube_.MergePatch(res::kNodes, "", NameOf(node), {{"metadata", {{"labels", patch}}}});
  if (r.ok()) ++counters_.labels_patched;
  Note(status, r.status());
}

void NodeJoiner::DeleteStaleNodes(Pass& pass, const std::string& project) {
  GroupNodeStatus ignored;
  for (const auto& node : pass.labelled) {
    const std::string id = node.value("spec", nlohmann::json::object()).value("providerID", "");
    const std::string prefix = "gce://" + project + "/";
    if (id.rfind(prefix, 0) != 0 || pass.live.count(id)) continue;
    const std::string rest = id.substr(prefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    // Only a VM Compute says is gone makes its Node stale: a failed listing,
    // or a VM of another group, never does.
    auto vm = compute_.GetInstance(project, rest.substr(0, slash), rest.substr(slash + 1));
    if (vm.ok() || !vm.error().not_found()) continue;
    Status s = kube_.Delete(res::kNodes, "", NameOf(node));
    if (s.ok()) ++counters_.nodes_deleted;
    else Note(ignored, s);
  }
}

Status NodeJoiner::Cordon(const std::string& group) {
  kube::ListOptions of_group;
  of_group.label_selector = std::string(plan::kNodeGroupLabel) + "=" + group;
  auto nodes = kube_.List(res::kNodes, "", of_group);
  if (!nodes.ok()) return nodes.status();
  for (const auto& n : nodes->items) {
    if (n.value("spec", nlohmann::json::object()).value("unschedulable", false)) continue;
    auto r = kube_.MergePatch(res::kNodes, "", NameOf(n), {{"spec", {{"unschedulable", true}}}});
    if (!r.ok()) return r.status();
    ++counters_.nodes_cordoned;
  }
  return Status::OK();
}

}  // namespace tpu::nodes
