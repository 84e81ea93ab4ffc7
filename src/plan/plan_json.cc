// The plan document: Plan ⇄ JSON (docs/plan-json.md).
#include "plan/plan_json.h"

#include <nlohmann/json.hpp>

#include "plan/resource_json.h"

namespace tpu::plan {
namespace {

using nlohmann::json;

json ShapeToJson(const CapacityShape& s) {
  return {{"generation", s.generation}, {"topology", s.topology}, {"capacityType", s.capacity}};
}

CapacityShape ShapeFromJson(const json& j) {
  return {j.value("generation", ""), j.value("topology", ""), j.value("capacityType", "")};
}

json ActionToJson(const Action& a) {
  json j;
  j["action"] = ActionKindName(a.kind);
  j["resource"] = {{"kind", ResourceKindName(a.resource.kind)},
                   {"id", a.resource.Id()},
                   {"project", a.resource.project},
                   {"location", a.resource.location},
                   {"cluster", a.resource.cluster},
                   {"name", a.resource.name}};
  j["target"] = a.target;
  j["source"] = a.source;
  j["reason"] = a.reason;
  json changes = json::array();
  for (const auto& c : a.changes)
    changes.push_back({{"path", c.path}, {"before", c.before}, {"after", c.after},
                       {"forcesReplace", c.forces_replace}});
  j["changes"] = changes;
  json calls = json::array();
  for (auto c : a.update_calls) calls.push_back(UpdateCallName(c));
  j["updateCalls"] = calls;
  j["blastRadius"] = {{"chipsCreated", a.blast.chips_created},
                      {"chipsDestroyed", a.blast.chips_destroyed},
                      {"hostsCreated", a.blast.hosts_created},
                      {"hostsDestroyed", a.blast.hosts_destroyed},
                      {"multiHost", a.blast.multi_host},
                      {"autoscaled", a.blast.autoscaled}};
  j["dependsOn"] = a.depends_on;
  if (!a.superseded_by.empty()) j["supersededBy"] = a.superseded_by;
  if (a.adopt_only) j["adoptOnly"] = true;
  if (!a.created_shape.empty()) j["createdShape"] = ShapeToJson(a.created_shape);
  if (!a.destroyed_shape.empty()) j["destroyedShape"] = ShapeToJson(a.destroyed_shape);
  if (a.node_pool) j["nodePool"] = NodePoolToJson(*a.node_pool);
  if (!a.fallbacks.empty()) {
    json fallbacks = json::array();
    for (const auto& f : a.fallbacks) fallbacks.push_back(NodePoolToJson(f));
    j["fallbacks"] = fallbacks;
  }
  if (a.ladder_move) j["ladderMove"] = true;
  if (a.workload_policy) j["workloadPolicy"] = WorkloadPolicyToJson(*a.workload_policy);
  if (a.instance_template) j["instanceTemplate"] = InstanceTemplateToJson(*a.instance_template);
  if (a.instance_group_manager)
    j["instanceGroupManager"] = InstanceGroupManagerToJson(*a.instance_group_manager);
  return j;
}

template <typename E>
E EnumFrom(const json& j, const char* key, bool (*parse)(const std::string&, E*)) {
  std::string s = j.at(key).get<std::string>();
  E e{};
  if (!parse(s, &e)) throw std::invalid_argument(std::string(key) + ": unknown value \"" + s + "\"");
  return e;
}

Action ActionFromJson(const json& j) {
  Action a;
  a.kind = EnumFrom(j, "action", ParseActionKind);
  const json& r = j.at("resource");
  a.resource.kind = EnumFrom(r, "kind", ParseResourceKind);
  a.resource.project = r.at("project").get<std::string>();
  a.resource.location = r.value("location", "");
  a.resource.cluster = r.value("cluster", "");
  a.resource.name = r.at("name").get<std::string>();
  a.target = j.at("target").get<std::string>();
  a.source = j.value("source", "");
  a.reason = j.value("reason", "");
  for (const auto& c : j.value("changes", json::array()))
    a.changes.push_back({c.at("path").get<std::string>(), c.at("before").get<std::string>(),
                         c.at("after").get<std::string>(), c.value("forcesReplace", false)});
  for (const auto& c : j.value("updateCalls", json::array())) {
    UpdateCall call{};
    if (!ParseUpdateCall(c.get<std::string>(), &call))
      throw std::invalid_argument("updateCalls: unknown value \"" + c.get<std::string>() + "\"");
    a.update_calls.push_back(call);
  }
  if (j.contains("blastRadius")) {
    const json& b = j.at("blastRadius");
    a.blast = {b.value("chipsCreated", 0), b.value("chipsDestroyed", 0), b.value("hostsCreated", 0),
               b.value("hostsDestroyed", 0), b.value("multiHost", false), b.value("autoscaled", false)};
  }
  a.depends_on = j.value("dependsOn", std::vector<std::string>{});
  a.superseded_by = j.value("supersededBy", "");
  a.adopt_only = j.value("adoptOnly", false);
  if (j.contains("createdShape")) a.created_shape = ShapeFromJson(j.at("createdShape"));
  if (j.contains("destroyedShape")) a.destroyed_shape = ShapeFromJson(j.at("destroyedShape"));
  if (j.contains("nodePool")) a.node_pool = NodePoolFromJson(j.at("nodePool"));
  for (const auto& f : j.value("fallbacks", json::array())) a.fallbacks.push_back(NodePoolFromJson(f));
  a.ladder_move = j.value("ladderMove", false);
  if (j.contains("workloadPolicy")) a.workload_policy = WorkloadPolicyFromJson(j.at("workloadPolicy"));
  if (j.contains("instanceTemplate")) a.instance_template = InstanceTemplateFromJson(j.at("instanceTemplate"));
  if (j.contains("instanceGroupManager"))
    a.instance_group_manager = InstanceGroupManagerFromJson(j.at("instanceGroupManager"));
  return a;
}

const char* StrategyName(manifest::ReplaceStrategy s) {
  return s == manifest::ReplaceStrategy::kCreateBeforeDelete ? "CreateBeforeDelete" : "DeleteBeforeCreate";
}

json SummaryToJson(const Summary& s) {
  return {{"create", s.create}, {"update", s.update}, {"replace", s.replace}, {"delete", s.remove},
          {"noop", s.noop}, {"chipsCreated", s.chips_created}, {"chipsDestroyed", s.chips_destroyed},
          {"chipsPossible", s.chips_possible}, {"adopt", s.adopt}};
}

}  // namespace

std::string PlanToJson(const Plan& plan, int indent) {
  json j;
  j["schemaVersion"] = plan.schema_version;
  j["toolVersion"] = plan.tool_version;
  j["createdAt"] = plan.created_at;
  j["liveFingerprints"] = plan.live_fingerprints;
  j["errors"] = plan.errors;
  j["hasChanges"] = plan.HasChanges();
  j["hasErrors"] = plan.HasErrors();
  j["summary"] = SummaryToJson(plan.Summarize());
  json targets = json::array();
  for (const auto& t : plan.targets) {
    json tj;
    tj["key"] = t.key;
    tj["project"] = t.project;
    tj["cluster"] = t.cluster;
    tj["location"] = t.location;
    tj["vanished"] = t.vanished;
    tj["status"] = TargetStatusName(t.status);
    tj["errors"] = t.errors;
    tj["warnings"] = t.warnings;
    tj["replaceStrategy"] = StrategyName(t.replace_strategy);
    tj["ownedChips"] = t.owned_chips;
    tj["deleteChips"] = t.delete_chips;
    tj["maxDeletePercent"] = t.max_delete_percent;
    json actions = json::array();
    for (const auto& a : t.actions) actions.push_back(ActionToJson(a));
    tj["actions"] = actions;
    json workload = json::array();
    for (const auto& p : t.workload_pools)
      workload.push_back({{"name", p.name}, {"jobset", p.jobset}, {"status", p.status}, {"chips", p.chips}});
    tj["workloadPools"] = workload;
    json reservations = json::array();
    for (const auto& r : t.reservations)
      reservations.push_back({{"name", r.name}, {"project", r.project}, {"zone", r.zone}, {"found", r.found},
                              {"count", r.count}, {"inUse", r.in_use}, {"takes", r.takes}, {"frees", r.frees},
                              {"blocked", r.blocked}, {"freeBefore", r.FreeBefore()}, {"freeAfter", r.FreeAfter()}});
    tj["reservations"] = reservations;
    json blocked = json::array();
    for (const auto& a : t.blocked_actions) blocked.push_back(ActionToJson(a));
    tj["blockedActions"] = blocked;
    json ladder = json::array();
    for (const auto& l : t.ladder)
      ladder.push_back({{"pool", l.pool}, {"rung", l.rung}, {"rungs", l.rungs}, {"capacity", l.capacity},
                        {"why", l.why}});
    tj["ladder"] = ladder;
    targets.push_back(tj);
  }
  j["targets"] = targets;
  return j.dump(indent) + (indent >= 0 ? "\n" : "");
}

Result<Plan> PlanFromJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("plan file: not valid JSON");
  try {
    Plan plan;
    plan.schema_version = j.at("schemaVersion").get<int>();
    if (plan.schema_version != kPlanSchemaVersion)
      return Status::InvalidArgument("plan file: schemaVersion " + std::to_string(plan.schema_version) +
                                     " is not supported (this tpu-provisioner reads " +
                                     std::to_string(kPlanSchemaVersion) + ")");
    plan.tool_version = j.value("toolVersion", "");
    plan.created_at = j.value("createdAt", "");
    plan.live_fingerprints = j.value("liveFingerprints", std::map<std::string, std::string>{});
    plan.errors = j.value("errors", std::vector<std::string>{});
    for (const auto& tj : j.at("targets")) {
      TargetPlan t;
      t.key = tj.at("key").get<std::string>();
      t.project = tj.at("project").get<std::string>();
      t.cluster = tj.at("cluster").get<std::string>();
      t.location = tj.value("location", "");
      t.vanished = tj.value("vanished", false);
      t.status = EnumFrom(tj, "status", ParseTargetStatus);
      t.errors = tj.value("errors", std::vector<std::string>{});
      t.warnings = tj.value("warnings", std::vector<std::string>{});
      std::string strategy = tj.value("replaceStrategy", "DeleteBeforeCreate");
      if (strategy == "CreateBeforeDelete") t.replace_strategy = manifest::ReplaceStrategy::kCreateBeforeDelete;
      else if (strategy != "DeleteBeforeCreate")
        throw std::invalid_argument("replaceStrategy: unknown value \"" + strategy + "\"");
      t.owned_chips = tj.value("ownedChips", 0);
      t.delete_chips = tj.value("deleteChips", 0);
      t.max_delete_percent = tj.value("maxDeletePercent", 50);
      for (const auto& aj : tj.at("actions")) t.actions.push_back(ActionFromJson(aj));
      for (const auto& pj : tj.value("workloadPools", json::array()))
        t.workload_pools.push_back({pj.at("name").get<std::string>(), pj.value("jobset", ""),
                                    pj.value("status", ""), pj.value("chips", 0)});
      for (const auto& rj : tj.value("reservations", json::array())) {
        ReservationUse r;
        r.name = rj.at("name").get<std::string>();
        r.project = rj.value("project", "");
        r.zone = rj.value("zone", "");
        r.found = rj.value("found", false);
        r.count = rj.value("count", 0);
        r.in_use = rj.value("inUse", 0);
        r.takes = rj.value("takes", 0);
        r.frees = rj.value("frees", 0);
        r.blocked = rj.value("blocked", 0);
        t.reservations.push_back(std::move(r));
      }
      for (const auto& aj : tj.value("blockedActions", json::array())) t.blocked_actions.push_back(ActionFromJson(aj));
      for (const auto& lj : tj.value("ladder", json::array()))
        t.ladder.push_back({lj.at("pool").get<std::string>(), lj.value("rung", 0), lj.value("rungs", 0),
                            lj.value("capacity", ""), lj.value("why", "")});
      plan.targets.push_back(std::move(t));
    }
    return plan;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("plan file: ") + e.what());
  }
}

}  // namespace tpu::plan
