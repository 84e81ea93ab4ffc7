// Serialization of the emulator state for its state file (see cloud_state.h).
#include "sim/cloud_state.h"

namespace tpu::sim {
namespace {

json OpToJson(const OpRecord& o) {
  return {{"wire", o.wire},           {"compute", o.compute},
          {"clusterKey", o.cluster_key}, {"targetKey", o.target_key},
          {"effect", static_cast<int>(o.effect)}, {"startMs", o.start_ms},
          {"doneMs", o.done_ms},      {"error", o.error},
          {"done", o.done}};
}

OpRecord OpFromJson(const json& j) {
  OpRecord o;
  o.wire = j.at("wire");
  o.compute = j.at("compute");
  o.cluster_key = j.at("clusterKey");
  o.target_key = j.at("targetKey");
  o.effect = static_cast<OpEffect>(j.at("effect").get<int>());
  o.start_ms = j.at("startMs");
  o.done_ms = j.at("doneMs");
  o.error = j.at("error");
  o.done = j.at("done");
  return o;
}

json InstanceRecordToJson(const InstanceRecord& r) {
  return {{"wire", r.wire},     {"migKey", r.mig_key},    {"action", r.action},
          {"opKey", r.op_key},  {"removing", r.removing}, {"errors", r.errors},
          {"reservation", r.reservation}, {"chips", r.chips}};
}

InstanceRecord InstanceRecordFromJson(const json& j) {
  InstanceRecord r;
  r.wire = j.at("wire");
  r.mig_key = j.at("migKey");
  r.action = j.at("action");
  r.op_key = j.at("opKey");
  r.removing = j.at("removing");
  r.errors = j.at("errors");
  r.reservation = j.value("reservation", "");  // absent in files from before reservations
  r.chips = j.value("chips", int64_t{0});
  return r;
}

}  // namespace

json CloudState::ToJson() const {
  json j = {{"version", 1}, {"nextId", next_id}, {"capacity", capacity.ToJson()}};
  j["clusters"] = clusters;
  json pj = json::object();
  for (const auto& [k, p] : pools) {
    pj[k] = {{"wire", p.wire}, {"nodeCount", p.node_count}, {"chips", p.chips},
             {"zone", p.zone}, {"accelerator", p.accelerator}, {"reservation", p.reservation}};
  }
  j["pools"] = pj;
  j["compute"] = compute;
  json ij = json::object();
  for (const auto& [k, r] : instances) ij[k] = InstanceRecordToJson(r);
  j["instances"] = ij;
  json g = json::object(), c = json::object();
  for (const auto& [k, o] : gke_ops) g[k] = OpToJson(o);
  for (const auto& [k, o] : compute_ops) c[k] = OpToJson(o);
  j["gkeOperations"] = g;
  j["computeOperations"] = c;
  return j;
}

CloudState CloudState::FromJson(const json& j) {
  CloudState s;
  s.next_id = j.at("nextId");
  s.capacity.Apply(j.at("capacity"));
  for (const auto& [k, v] : j.at("clusters").items()) s.clusters[k] = v;
  for (const auto& [k, v] : j.at("pools").items()) {
    PoolRecord p;
    p.wire = v.at("wire");
    p.node_count = v.at("nodeCount");
    p.chips = v.at("chips");
    p.zone = v.at("zone");
    p.accelerator = v.at("accelerator");
    p.reservation = v.at("reservation");
    s.pools[k] = p;
  }
  for (const auto& [k, v] : j.at("compute").items()) s.compute[k] = v;
  // State files written before instances were modelled have none.
  if (j.contains("instances"))
    for (const auto& [k, v] : j.at("instances").items()) s.instances[k] = InstanceRecordFromJson(v);
  for (const auto& [k, v] : j.at("gkeOperations").items()) s.gke_ops[k] = OpFromJson(v);
  for (const auto& [k, v] : j.at("computeOperations").items()) s.compute_ops[k] = OpFromJson(v);
  for (auto* ops : {&s.gke_ops, &s.compute_ops})
    for (auto& [k, op] : *ops)
      if (!op.done) s.live_ops.push_back(&op);
  return s;
}

}  // namespace tpu::sim
