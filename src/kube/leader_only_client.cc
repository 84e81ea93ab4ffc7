// The write gate of LeaderOnlyClient.
#include "kube/leader_only_client.h"

namespace tpu::kube {

LeaderOnlyClient::LeaderOnlyClient(KubeClient& inner, LeaderElector& elector)
    : LeaderOnlyClient(inner, [&elector] { return elector.IsLeader(); },
                       "not the leader (lease " + elector.config().ns + "/" + elector.config().name + ")") {}

Status LeaderOnlyClient::Check(const ResourceRef& ref, const std::string& verb) {
  if (ref.group == resources::kLeases.group && ref.resource == resources::kLeases.resource) return Status::OK();
  if (may_write_()) return Status::OK();
  return Status::FailedPrecondition(verb + " " + ref.resource + ": " + refusal_);
}

Result<json> LeaderOnlyClient::Create(const ResourceRef& ref, const std::string& ns, const json& obj) {
  if (Status s = Check(ref, "create"); !s.ok()) return s;
  return inner_.Create(ref, ns, obj);
}

Result<json> LeaderOnlyClient::Update(const ResourceRef& ref, const std::string& ns, const json& obj) {
  if (Status s = Check(ref, "update"); !s.ok()) return s;
  return inner_.Update(ref, ns, obj);
}

Result<json> LeaderOnlyClient::MergePatch(const ResourceRef& ref, const std::string& ns,
                                          const std::string& name, const json& patch,
                                          const std::string& subresource) {
  if (Status s = Check(ref, "patch"); !s.ok()) return s;
  return inner_.MergePatch(ref, ns, name, patch, subresource);
}

Result<json> LeaderOnlyClient::Apply(const ResourceRef& ref, const std::string& ns, const json& obj,
                                     const ApplyOptions& options) {
  if (Status s = Check(ref, "apply"); !s.ok()) return s;
  return inner_.Apply(ref, ns, obj, options);
}

Status LeaderOnlyClient::Delete(const ResourceRef& ref, const std::string& ns, const std::string& name) {
  if (Status s = Check(ref, "delete"); !s.ok()) return s;
  return inner_.Delete(ref, ns, name);
}

}  // namespace tpu::kube
