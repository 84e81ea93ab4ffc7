// A KubeClient that writes only while this replica may: while it leads (leader
// election), or while it holds the shard of the Kubernetes cluster's target (a
// sharded `watch`). Reads and watches pass through; creates, updates, patches,
// applies and deletes fail with FailedPrecondition otherwise. Hand this to the
// quota sync and the scale-down gate so a follower can never write. Writes to
// Leases go through regardless, since electing and sharding need them.
#pragma once

#include <functional>
#include <string>

#include "kube/client.h"
#include "kube/leader_election.h"

namespace tpu::kube {

class LeaderOnlyClient : public KubeClient {
 public:
  LeaderOnlyClient(KubeClient& inner, LeaderElector& elector);
  // Writes while `may_write()`; `refusal` says why not ("not the leader …").
  LeaderOnlyClient(KubeClient& inner, std::function<bool()> may_write, std::string refusal)
      : inner_(inner), may_write_(std::move(may_write)), refusal_(std::move(refusal)) {}

  Result<json> Get(const ResourceRef& ref, const std::string& ns, const std::string& name) override {
    return inner_.Get(ref, ns, name);
  }
  Result<ObjectList> List(const ResourceRef& ref, const std::string& ns, const ListOptions& o) override {
    return inner_.List(ref, ns, o);
  }
  Result<json> Create(const ResourceRef& ref, const std::string& ns, const json& obj) override;
  Result<json> Update(const ResourceRef& ref, const std::string& ns, const json& obj) override;
  Result<json> MergePatch(const ResourceRef& ref, const std::string& ns, const std::string& name,
                          const json& patch, const std::string& subresource = "") override;
  Result<json> Apply(const ResourceRef& ref, const std::string& ns, const json& obj,
                     const ApplyOptions& options = {}) override;
  Status Delete(const ResourceRef& ref, const std::string& ns, const std::string& name) override;
  Status Watch(const ResourceRef& ref, const std::string& ns, const WatchOptions& o,
               const std::function<bool(const WatchEvent&)>& on_event) override {
    return inner_.Watch(ref, ns, o, on_event);
  }
  Result<std::vector<std::string>> ServedVersions(const std::string& group) override {
    return inner_.ServedVersions(group);
  }
  Result<std::vector<std::string>> ServedResources(const std::string& group, const std::string& version) override {
    return inner_.ServedResources(group, version);
  }

 private:
  Status Check(const ResourceRef& ref, const std::string& verb);

  KubeClient& inner_;
  std::function<bool()> may_write_;
  std::string refusal_;
};

}  // namespace tpu::kube
