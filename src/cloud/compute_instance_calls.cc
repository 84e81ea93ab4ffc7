// ComputeClient's calls on a managed instance group's instances: the group's
// listManagedInstances (every page), and instances.get, setMetadata and
// delete. Instance metadata carries secrets (a bootstrap token), so nothing
// here logs a body, and an API error that quotes a value we sent has it
// redacted before the error leaves the client.
#include "cloud/compute_client.h"

#include "cloud/compute_wire.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

// Values this short are redacted nowhere: replacing them would garble the
// message without hiding anything a secret is made of.
constexpr size_t kMinRedactedValue = 4;

ApiError RedactValues(ApiError e, const std::vector<std::pair<std::string, std::string>>& items) {
  for (const auto& [key, value] : items) {
    if (value.size() < kMinRedactedValue) continue;
    for (size_t at = e.message.find(value); at != std::string::npos; at = e.message.find(value, at))
      e.message.replace(at, value.size(), "<redacted>");
  }
  return e;
}

std::string InstancePath(const std::string& project, const std::string& zone, const std::string& name) {
  return "projects/" + project + "/zones/" + zone + "/instances/" + name;
}

}  // namespace

ApiResult<std::vector<ManagedInstance>> ComputeClient::ListManagedInstances(const std::string& project,
                                                                            const std::string& zone,
                                                                            const std::string& mig) {
  const std::string path =
      "projects/" + project + "/zones/" + zone + "/instanceGroupManagers/" + mig + "/listManagedInstances";
  std::vector<ManagedInstance> out;
  std::string page_token;
  // A PAGELESS group (the default) answers everything at once and ignores
  // maxResults; a PAGINATED one pages, and we follow nextPageToken.
  do {
    std::string url = Url(path) + "?maxResults=" + std::to_string(kMaxResults);
    if (!page_token.empty()) url += "&pageToken=" + UrlEncode(page_token);
    auto j = caller_->Call("POST", url, json::object());
    if (!j.ok()) return j.error();
    if (const auto it = j->find("managedInstances"); it != j->end() && it->is_array()) {
      for (const auto& item : *it) {
        auto m = ManagedInstanceFromJson(item);
        if (!m.ok()) return ParseFailure("POST " + path, m.status());
        out.push_back(std::move(*m));
      }
    }
    const auto next = j->find("nextPageToken");
    page_token = next != j->end() && next->is_string() ? next->get<std::string>() : "";
  } while (!page_token.empty());
  return out;
}

ApiResult<Instance> ComputeClient::GetInstance(const std::string& project, const std::string& zone,
                                               const std::string& name) {
  const std::string path = InstancePath(project, zone, name);
  auto j = caller_->Call("GET", Url(path));
  if (!j.ok()) return j.error();
  auto in = InstanceFromJson(*j);
  if (!in.ok()) return ParseFailure("GET " + path, in.status());
  if (in->zone.empty()) in->zone = zone;
  return std::move(*in);
}

ApiResult<Operation> ComputeClient::SetInstanceMetadata(
    const std::string& project, const std::string& zone, const std::string& name,
    const std::string& fingerprint, const std::vector<std::pair<std::string, std::string>>& items) {
  const json body = InstanceMetadataToJson(fingerprint, items);
  auto op = CallOperation("POST", InstancePath(project, zone, name) + "/setMetadata", &body);
  if (!op.ok()) return RedactValues(op.error(), items);
  return op;
}

ApiResult<Operation> ComputeClient::DeleteInstance(const std::string& project, const std::string& zone,
                                                   const std::string& name) {
  return CallOperation("DELETE", InstancePath(project, zone, name), nullptr);
}

}  // namespace tpu::cloud
