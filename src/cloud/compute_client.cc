// ComputeClient: URLs, bodies, aggregated-list paging and parsing for compute/v1.
#include "cloud/compute_client.h"

#include "cloud/compute_wire.h"
#include "cloud/list_reader.h"

namespace tpu::cloud {
namespace {

using nlohmann::json;

// Fills in the project and scope a Compute operation lives in, when the
// response did not say (the emulator and old API versions may omit them).
void FillOperationScope(Operation* op, const std::string& project, const std::string& scope,
                        const std::string& location) {
  if (op->project.empty()) op->project = project;
  if (op->scope == "global" && scope != "global") {
    op->scope = scope;
    op->location = location;
  }
}

// Sends the pages of one aggregated list in turn on the calling thread,
// following nextPageToken from the first page to the last.
template <typename PreparePage>
ApiResult<bool> SendEveryPage(PreparePage prepare_page) {
  std::string page_token;
  do {
    auto next = SendPrepared(prepare_page(page_token));
    if (!next.ok()) return next.error();
    page_token = std::move(*next);
  } while (!page_token.empty());
  return true;
}

}  // namespace

Prepared<Operation> ComputeClient::PrepareOperation(const std::string& method, const std::string& path,
                                                    const json* body) {
  auto call = body ? caller_->Prepare(method, Url(path), *body) : caller_->Prepare(method, Url(path));
  std::function<ApiResult<Operation>(ApiResult<json>)> parse = [method, path](ApiResult<json> j) -> ApiResult<Operation> {
    if (!j.ok()) return j.error();
    std::string project = SegmentAfter(path, "projects");
    auto op = ComputeOperationFromJson(*j, project);
    if (!op.ok()) return ParseFailure(method + " " + path, op.status());
    if (std::string zone = SegmentAfter(path, "zones"); !zone.empty()) {
      FillOperationScope(&*op, project, "zones", zone);
    } else if (std::string region = SegmentAfter(path, "regions"); !region.empty()) {
      FillOperationScope(&*op, project, "regions", region);
    }
    return std::move(*op);
  };
  return Then<Operation>(std::move(call), std::move(parse));
}

std::string ComputeClient::ListPageUrl(const std::string& path, bool aggregated, const std::string& filter,
                                       const std::string& page_token) const {
  std::string url = Url(path) + "?maxResults=" + std::to_string(kMaxResults);
  if (aggregated) url += "&returnPartialSuccess=false";
  if (!filter.empty()) url += "&filter=" + UrlEncode(filter);
  if (!page_token.empty()) url += "&pageToken=" + UrlEncode(page_token);
  return url;
}

template <typename ReadPage>
Prepared<std::string> ComputeClient::PrepareAggregatedPage(const std::string& project, const std::string& collection,
                                                           const std::string& filter, const std::string& page_token,
                                                           ReadPage read_page) {
  std::string path = "projects/" + project + "/aggregated/" + collection;
  std::string url = ListPageUrl(path, /*aggregated=*/true, filter, page_token);
  std::function<ApiResult<std::string>(ApiResult<std::string>)> read =
      [path, read_page](ApiResult<std::string> body) -> ApiResult<std::string> {
    if (!body.ok()) return body.error();
    Result<AggregatedPage> page = read_page(*body);
    if (!page.ok()) return ParseFailure("GET " + path, page.status());
    if (!page->unreachables.empty()) {
      // A partial list would read as deleted resources: refuse it.
      ApiError e;
      e.call = "GET " + path;
      e.http_status = 503;
      e.status = "UNAVAILABLE";
      e.message = "aggregated list has unreachable scopes: " + page->unreachables;
      return e;
    }
    return std::move(page->next_page_token);
  };
  return Then<std::string>(caller_->PrepareRaw(url), std::move(read));
}

Prepared<std::string> ComputeClient::PrepareWorkloadPolicyPage(const std::string& project, const std::string& page_token,
                                                               std::vector<WorkloadPolicy>* out) {
  return PrepareAggregatedPage(project, "resourcePolicies", "", page_token,
                               [out](std::string& body) { return ReadWorkloadPolicyPage(body, out); });
}

Prepared<std::string> ComputeClient::PrepareInstanceTemplatePage(const std::string& project,
                                                                 const std::string& page_token,
                                                                 std::vector<InstanceTemplate>* out) {
  return PrepareAggregatedPage(project, "instanceTemplates", "", page_token,
                               [out](std::string& body) { return ReadInstanceTemplatePage(body, out); });
}

Prepared<std::string> ComputeClient::PrepareInstanceGroupManagerPage(const std::string& project,
                                                                     const std::string& page_token,
                                                                     std::vector<InstanceGroupManager>* out) {
  return PrepareAggregatedPage(project, "instanceGroupManagers", "", page_token,
                               [out](std::string& body) { return ReadInstanceGroupManagerPage(body, out); });
}

Prepared<std::string> ComputeClient::PrepareReservationPage(const std::string& project, const std::string& page_token,
                                                            std::vector<Reservation>* out) {
  return PrepareAggregatedPage(project, "reservations", "", page_token,
                               [out, project](std::string& body) { return ReadReservationPage(body, project, out); });
}

Prepared<std::string> ComputeClient::PrepareOperationPage(const std::string& project, bool only_running,
                                                          const std::string& page_token, std::vector<Operation>* out) {
  return PrepareAggregatedPage(project, "operations", only_running ? "status != DONE" : "", page_token,
                               [out, project, only_running](std::string& body) {
                                 return ReadComputeOperationPage(body, project, only_running, out);
                               });
}

Prepared<Operation> ComputeClient::PrepareInsertWorkloadPolicy(const std::string& project, const WorkloadPolicy& policy) {
  WorkloadPolicy body_policy = policy;
  body_policy.region.clear();  // in the path; the API fills the URL form
  auto body = WorkloadPolicyToJson(body_policy);
  return PrepareOperation("POST", "projects/" + project + "/regions/" + policy.region + "/resourcePolicies", &body);
}

ApiResult<WorkloadPolicy> ComputeClient::GetWorkloadPolicy(const std::string& project, const std::string& region,
                                                           const std::string& name) {
  std::string path = "projects/" + project + "/regions/" + region + "/resourcePolicies/" + name;
  auto j = caller_->Call("GET", Url(path));
  if (!j.ok()) return j.error();
  auto p = WorkloadPolicyFromJson(*j);
  if (!p.ok()) return ParseFailure("GET " + path, p.status());
  if (p->region.empty()) p->region = region;
  return std::move(*p);
}

Prepared<Operation> ComputeClient::PrepareDeleteWorkloadPolicy(const std::string& project, const std::string& region,
                                                         const std::string& name) {
  return PrepareOperation("DELETE", "projects/" + project + "/regions/" + region + "/resourcePolicies/" + name, nullptr);
}

Prepared<Operation> ComputeClient::PrepareInsertInstanceTemplate(const std::string& project, const InstanceTemplate& t) {
  auto body = InstanceTemplateToJson(t);
  return PrepareOperation("POST", "projects/" + project + "/global/instanceTemplates", &body);
}

ApiResult<InstanceTemplate> ComputeClient::GetInstanceTemplate(const std::string& project, const std::string& name) {
  std::string path = "projects/" + project + "/global/instanceTemplates/" + name;
  auto j = caller_->Call("GET", Url(path));
  if (!j.ok()) return j.error();
  auto t = InstanceTemplateFromJson(*j);
  if (!t.ok()) return ParseFailure("GET " + path, t.status());
  return std::move(*t);
}

Prepared<Operation> ComputeClient::PrepareDeleteInstanceTemplate(const std::string& project, const std::string& name) {
  return PrepareOperation("DELETE", "projects/" + project + "/global/instanceTemplates/" + name, nullptr);
}

Prepared<Operation> ComputeClient::PrepareInsertInstanceGroupManager(const std::string& project,
                                                               const InstanceGroupManager& igm) {
  InstanceGroupManager body_igm = igm;
  body_igm.zone.clear();
  auto body = InstanceGroupManagerToJson(body_igm);
  return PrepareOperation("POST", "projects/" + project + "/zones/" + igm.zone + "/instanceGroupManagers", &body);
}

ApiResult<InstanceGroupManager> ComputeClient::GetInstanceGroupManager(const std::string& project,
                                                                       const std::string& zone,
                                                                       const std::string& name) {
  std::string path = "projects/" + project + "/zones/" + zone + "/instanceGroupManagers/" + name;
  auto j = caller_->Call("GET", Url(path));
  if (!j.ok()) return j.error();
  auto m = InstanceGroupManagerFromJson(*j);
  if (!m.ok()) return ParseFailure("GET " + path, m.status());
  if (m->zone.empty()) m->zone = zone;
  return std::move(*m);
}

Prepared<Operation> ComputeClient::PrepareDeleteInstanceGroupManager(const std::string& project, const std::string& zone,
                                                               const std::string& name) {
  return PrepareOperation("DELETE", "projects/" + project + "/zones/" + zone + "/instanceGroupManagers/" + name,
                       nullptr);
}

Prepared<Operation> ComputeClient::PrepareResizeInstanceGroupManager(const std::string& project, const std::string& zone,
                                                               const std::string& name, int size) {
  json empty = json::object();
  return PrepareOperation("POST",
                       "projects/" + project + "/zones/" + zone + "/instanceGroupManagers/" + name +
                           "/resize?size=" + std::to_string(size),
                       &empty);
}

ApiResult<std::vector<WorkloadPolicy>> ComputeClient::ListWorkloadPolicies(const std::string& project) {
  std::vector<WorkloadPolicy> out;
  auto r = SendEveryPage([&](const std::string& token) { return PrepareWorkloadPolicyPage(project, token, &out); });
  if (!r.ok()) return r.error();
  return out;
}

ApiResult<std::vector<InstanceTemplate>> ComputeClient::ListInstanceTemplates(const std::string& project) {
  std::vector<InstanceTemplate> out;
  auto r = SendEveryPage([&](const std::string& token) { return PrepareInstanceTemplatePage(project, token, &out); });
  if (!r.ok()) return r.error();
  return out;
}

ApiResult<std::vector<InstanceGroupManager>> ComputeClient::ListInstanceGroupManagers(const std::string& project) {
  std::vector<InstanceGroupManager> out;
  auto r = SendEveryPage(
      [&](const std::string& token) { return PrepareInstanceGroupManagerPage(project, token, &out); });
  if (!r.ok()) return r.error();
  return out;
}

ApiResult<std::vector<Reservation>> ComputeClient::ListReservations(const std::string& project) {
  std::vector<Reservation> out;
  auto r = SendEveryPage([&](const std::string& token) { return PrepareReservationPage(project, token, &out); });
  if (!r.ok()) return r.error();
  return out;
}

ApiResult<Reservation> ComputeClient::GetReservation(const std::string& project, const std::string& zone,
                                                     const std::string& name) {
  std::string path = "projects/" + project + "/zones/" + zone + "/reservations/" + name;
  auto j = caller_->Call("GET", Url(path));
  if (!j.ok()) return j.error();
  auto res = ReservationFromJson(*j, project);
  if (!res.ok()) return ParseFailure("GET " + path, res.status());
  if (res->zone.empty()) res->zone = zone;
  return std::move(*res);
}

ApiResult<std::vector<Operation>> ComputeClient::ListOperations(const std::string& project, bool only_running) {
  std::vector<Operation> out;
  auto r = SendEveryPage(
      [&](const std::string& token) { return PrepareOperationPage(project, only_running, token, &out); });
  if (!r.ok()) return r.error();
  return out;
}

Prepared<std::vector<Operation>> ComputeClient::PrepareListRunningOperations(const std::string& project,
                                                                             const std::string& scope) {
  const std::string path =
      "projects/" + project + "/" + (scope.empty() ? std::string("aggregated") : scope) + "/operations";
  const std::string url = ListPageUrl(path, /*aggregated=*/scope.empty(), "status != DONE", "");
  return Then<std::vector<Operation>>(
      caller_->PrepareRaw(url),
      std::function<ApiResult<std::vector<Operation>>(ApiResult<std::string>)>(
          [project, scope, path](ApiResult<std::string> body) -> ApiResult<std::vector<Operation>> {
            if (!body.ok()) return body.error();
            std::vector<Operation> out;
            Result<AggregatedPage> page = scope.empty() ? ReadComputeOperationPage(*body, project, true, &out)
                                                        : ReadScopeOperationPage(*body, project, scope, true, &out);
            if (!page.ok()) return ParseFailure("GET " + path, page.status());
            // A scope left unreachable, or a second page, only leaves operations
            // out: whoever asked for them reads them one by one.
            return out;
          }));
}

std::string OperationScopePath(const Operation& op) {
  if (op.scope.empty() || op.scope == "global") return "global";
  return op.scope + "/" + op.location;
}

static std::string OperationPath(const Operation& op) {
  return "projects/" + op.project + "/" + OperationScopePath(op) + "/operations/" + op.name;
}

Prepared<Operation> ComputeClient::PrepareGetOperation(const Operation& op) {
  return PrepareOperation("GET", OperationPath(op), nullptr);
}

ApiResult<Operation> ComputeClient::GetOperation(const Operation& op) { return SendPrepared(PrepareGetOperation(op)); }

ApiResult<Operation> ComputeClient::WaitOperation(const Operation& op) {
  json empty = json::object();
  return CallOperation("POST", OperationPath(op) + "/wait", &empty);
}

ApiResult<Operation> ComputeClient::InsertWorkloadPolicy(const std::string& project, const WorkloadPolicy& policy) {
  return SendPrepared(PrepareInsertWorkloadPolicy(project, policy));
}

ApiResult<Operation> ComputeClient::DeleteWorkloadPolicy(const std::string& project, const std::string& region,
                                                         const std::string& name) {
  return SendPrepared(PrepareDeleteWorkloadPolicy(project, region, name));
}

ApiResult<Operation> ComputeClient::InsertInstanceTemplate(const std::string& project, const InstanceTemplate& t) {
  return SendPrepared(PrepareInsertInstanceTemplate(project, t));
}

ApiResult<Operation> ComputeClient::DeleteInstanceTemplate(const std::string& project, const std::string& name) {
  return SendPrepared(PrepareDeleteInstanceTemplate(project, name));
}

ApiResult<Operation> ComputeClient::InsertInstanceGroupManager(const std::string& project,
                                                               const InstanceGroupManager& igm) {
  return SendPrepared(PrepareInsertInstanceGroupManager(project, igm));
}

ApiResult<Operation> ComputeClient::DeleteInstanceGroupManager(const std::string& project, const std::string& zone,
                                                               const std::string& name) {
  return SendPrepared(PrepareDeleteInstanceGroupManager(project, zone, name));
}

ApiResult<Operation> ComputeClient::ResizeInstanceGroupManager(const std::string& project, const std::string& zone,
                                                               const std::string& name, int size) {
  return SendPrepared(PrepareResizeInstanceGroupManager(project, zone, name, size));
}

}  // namespace tpu::cloud
