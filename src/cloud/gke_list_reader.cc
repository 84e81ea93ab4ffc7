// ReadClusterList and ReadGkeOperationList (list_reader.h): GKE's
// ListClustersResponse with node pools embedded and ListOperationsResponse,
// read as gke_wire.cc's ClusterListFromJson and GkeOperationFromJson read them. Where that
// reader reads a field only when another says so (a cluster's `zone` when it
// has no `location`; autoscaling's total* bounds when the per-zone ones are
// absent), the field is read ahead into a scratch reader and counts only then.
#include "cloud/list_reader.h"

#include "cloud/compute_wire.h"  // SegmentAfter
#include "cloud/gke_wire.h"      // KnownFailureReason
#include "cloud/ondemand_fields.h"

namespace tpu::cloud {
namespace {

using ondemand::FieldReader;
using ondemand::ForEachField;
using ondemand::JsonType;
using ondemand::Value;

void ReadTaints(FieldReader& r, Value& v, std::string_view key, std::optional<std::vector<NodeTaint>>* out) {
  ondemand::Array a;
  if (!r.Array(v, key, &a)) return;
  std::vector<NodeTaint> taints;
  for (auto item : a) {
    Value iv = item.value();
    NodeTaint t;
    // A taint that is not an object reads as an empty one, as WireReader reads it.
    if (iv.type() == JsonType::object) {
      ForEachField(iv.get_object(), [&](std::string_view k, Value& f) {
        if (k == "key") r.String(f, k, &t.key);
        else if (k == "value") r.String(f, k, &t.value);
        else if (k == "effect") r.String(f, k, &t.effect);
      });
    }
    taints.push_back(std::move(t));
  }
  *out = std::move(taints);
}

void ReadNodeConfig(FieldReader& r, ondemand::Object c, NodePool* p) {
  ForEachField(c, [&](std::string_view k, Value& v) {
    if (k == "machineType") r.String(v, k, &p->machine_type);
    else if (k == "diskSizeGb") r.Int(v, k, &p->disk_size_gb);
    else if (k == "diskType") r.String(v, k, &p->disk_type);
    else if (k == "imageType") r.String(v, k, &p->image_type);
    else if (k == "serviceAccount") r.String(v, k, &p->service_account);
    else if (k == "oauthScopes") r.Strings(v, k, &p->oauth_scopes);
    else if (k == "labels") r.StringMap(v, k, &p->labels);
    else if (k == "taints") ReadTaints(r, v, k, &p->taints);
    else if (k == "resourceLabels") r.StringMap(v, k, &p->resource_labels);
    else if (k == "tags") r.Strings(v, k, &p->tags);
    else if (k == "metadata") r.StringMap(v, k, &p->metadata);
    else if (k == "spot") r.Bool(v, k, &p->spot);
    else if (k == "flexStart") r.Bool(v, k, &p->flex_start);
    else if (k == "bootDiskKmsKey") r.String(v, k, &p->boot_disk_kms_key);
    else if (k == "reservationAffinity") {
      ondemand::Object o;
      if (!r.Object(v, k, &o)) return;
      ReservationAffinity a;
      ForEachField(o, [&](std::string_view k2, Value& f) {
        if (k2 == "consumeReservationType") r.String(f, k2, &a.consume_reservation_type);
        else if (k2 == "key") r.String(f, k2, &a.key);
        else if (k2 == "values") r.Strings(f, k2, &a.values);
      });
      p->reservation_affinity = std::move(a);
    } else if (k == "shieldedInstanceConfig") {
      ondemand::Object o;
      if (!r.Object(v, k, &o)) return;
      ForEachField(o, [&](std::string_view k2, Value& f) {
        if (k2 == "enableSecureBoot") r.Bool(f, k2, &p->secure_boot);
        else if (k2 == "enableIntegrityMonitoring") r.Bool(f, k2, &p->integrity_monitoring);
      });
    } else if (k == "secondaryBootDisks") {
      ondemand::Array a;
      if (!r.Array(v, k, &a)) return;
      for (auto item : a) {
        Value iv = item.value();
        SecondaryBootDisk disk;
        if (iv.type() == JsonType::object) {
          ForEachField(iv.get_object(), [&](std::string_view k2, Value& f) {
            if (k2 == "diskImage") r.String(f, k2, &disk.disk_image);
            else if (k2 == "mode") r.String(f, k2, &disk.mode);
          });
        }
        p->secondary_boot_disks.push_back(std::move(disk));
      }
    }
  });
}

// An autoscaling bound read ahead: GKE's per-zone and total bounds are both
// on the wire, and which one counts depends on which keys are present.
struct Bound {
  bool key = false;  // the key is present (even as null)
  std::optional<int> value;
  FieldReader reader{"node pool"};
  void Read(Value& v, std::string_view k) {
    key = true;
    reader.Int(v, k, &value);
  }
};

void ReadAutoscaling(FieldReader& r, ondemand::Object o, NodePoolAutoscaling* as) {
  Bound min, max, total_min, total_max;
  ForEachField(o, [&](std::string_view k, Value& v) {
    if (k == "enabled") r.Bool(v, k, &as->enabled);
    else if (k == "minNodeCount") min.Read(v, k);
    else if (k == "maxNodeCount") max.Read(v, k);
    else if (k == "totalMinNodeCount") total_min.Read(v, k);
    else if (k == "totalMaxNodeCount") total_max.Read(v, k);
    else if (k == "locationPolicy") r.String(v, k, &as->location_policy);
  });
  // The total_* bounds are the per-zone ones of a one-zone (TPU) pool.
  const bool total = !min.key && !max.key;
  for (auto [bound, out] : {std::pair{total ? &total_min : &min, &as->min_node_count},
                            std::pair{total ? &total_max : &max, &as->max_node_count}}) {
    r.Adopt(bound->reader);
    if (bound->value) *out = *bound->value;
  }
  if (as->location_policy == "LOCATION_POLICY_UNSPECIFIED") as->location_policy.clear();
}

Status ReadNodePool(Value& v, NodePool* p) {
  if (v.type() != JsonType::object) return Status::InvalidArgument("node pool: expected a JSON object");
  FieldReader r("node pool");
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    ondemand::Object o;
    if (k == "name") r.String(f, k, &p->name);
    else if (k == "config") {
      if (r.Object(f, k, &o)) ReadNodeConfig(r, o, p);
    } else if (k == "maxPodsConstraint") {
      if (r.Object(f, k, &o))
        ForEachField(o, [&](std::string_view k2, Value& g) {
          if (k2 == "maxPodsPerNode") r.Int(g, k2, &p->max_pods_per_node);
        });
    } else if (k == "networkConfig") {
      if (!r.Object(f, k, &o)) return;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        ondemand::Array nets;
        if (k2 != "additionalNodeNetworkConfigs" || !r.Array(g, k2, &nets)) return;
        for (auto item : nets) {
          Value iv = item.value();
          AdditionalNodeNetwork net;
          if (iv.type() == JsonType::object) {
            ForEachField(iv.get_object(), [&](std::string_view k3, Value& h) {
              if (k3 == "network") r.String(h, k3, &net.network);
              else if (k3 == "subnetwork") r.String(h, k3, &net.subnetwork);
            });
          }
          p->additional_node_networks.push_back(std::move(net));
        }
      });
    } else if (k == "initialNodeCount") r.Int(f, k, &p->node_count);
    else if (k == "placementPolicy") {
      if (!r.Object(f, k, &o)) return;
      PlacementPolicy policy;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "type") r.String(g, k2, &policy.type);
        else if (k2 == "tpuTopology") r.String(g, k2, &policy.tpu_topology);
        else if (k2 == "policyName") r.String(g, k2, &policy.policy_name);
      });
      if (policy.type == "TYPE_UNSPECIFIED") policy.type.clear();
      p->placement_policy = std::move(policy);
    } else if (k == "autoscaling") {
      if (!r.Object(f, k, &o)) return;
      NodePoolAutoscaling as;
      ReadAutoscaling(r, o, &as);
      p->autoscaling = as;
    } else if (k == "management") {
      if (!r.Object(f, k, &o)) return;
      NodeManagement mg;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "autoRepair") r.Bool(g, k2, &mg.auto_repair);
        else if (k2 == "autoUpgrade") r.Bool(g, k2, &mg.auto_upgrade);
      });
      p->management = mg;
    } else if (k == "version") r.String(f, k, &p->version);
    else if (k == "locations") r.Strings(f, k, &p->locations);
    else if (k == "status") r.String(f, k, &p->status);
    else if (k == "statusMessage") r.String(f, k, &p->status_message);
    else if (k == "selfLink") r.String(f, k, &p->self_link);
    else if (k == "instanceGroupUrls") r.Strings(f, k, &p->instance_group_urls);
  });
  return r.ok() ? Status::OK() : r.status();
}

Status ReadCluster(Value& v, const std::string& project, Cluster* c) {
  if (v.type() != JsonType::object) return Status::InvalidArgument("cluster: expected a JSON object");
  FieldReader r("cluster");
  std::optional<std::string> zone;
  FieldReader zone_reader("cluster");
  Status pool_error;
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    if (k == "name") r.String(f, k, &c->name);
    else if (k == "location") r.String(f, k, &c->location);
    else if (k == "zone") zone_reader.String(f, k, &zone);
    else if (k == "status") r.String(f, k, &c->status);
    else if (k == "selfLink") r.String(f, k, &c->self_link);
    else if (k == "releaseChannel") {
      ondemand::Object o;
      if (r.Object(f, k, &o))
        ForEachField(o, [&](std::string_view k2, Value& g) {
          if (k2 == "channel") r.String(g, k2, &c->release_channel);
        });
    } else if (k == "nodePools") {
      ondemand::Array pools;
      if (!r.Array(f, k, &pools)) return;
      for (auto item : pools) {
        Value pv = item.value();
        NodePool pool;
        Status s = ReadNodePool(pv, &pool);
        if (!s.ok() && pool_error.ok()) pool_error = s;
        if (pool_error.ok()) c->node_pools.push_back(std::move(pool));
      }
    }
  });
  c->node_pools.shrink_to_fit();  // a fleet of clusters: no spare room in each
  // The legacy `zone` is read only when there is no `location`.
  if (c->location.empty()) {
    r.Adopt(zone_reader);
    if (zone) c->location = *zone;
  }
  if (c->release_channel == "UNSPECIFIED") c->release_channel.clear();
  if (!r.ok()) return r.status();
  if (!pool_error.ok()) return pool_error.WithContext("cluster " + c->name);
  c->project = project.empty() ? SegmentAfter(c->self_link, "projects") : project;
  return Status::OK();
}

// A node pool or cluster condition, read ahead: whether its code and message
// count depends on the conditions and the error before it.
struct Condition {
  std::string code, message;
  FieldReader code_reader{"GKE operation"}, message_reader{"GKE operation"};
};

void ReadConditions(FieldReader& r, Value& v, std::string_view key, std::vector<Condition>* out) {
  ondemand::Array a;
  if (!r.Array(v, key, &a)) return;
  out->clear();
  for (auto item : a) {
    Value c = item.value();
    Condition& cond = out->emplace_back();
    if (c.type() != JsonType::object) continue;
    ForEachField(c.get_object(), [&](std::string_view k, Value& f) {
      if (k == "code") cond.code_reader.String(f, k, &cond.code);
      else if (k == "message") cond.message_reader.String(f, k, &cond.message);
    });
  }
}

Status ReadGkeOperation(Value& v, const std::string& project, Operation* op) {
  if (v.type() != JsonType::object) return Status::InvalidArgument("GKE operation: expected a JSON object");
  op->api = Operation::Api::kGke;
  op->scope = "locations";
  FieldReader r("GKE operation");
  std::string zone, status_message;
  FieldReader zone_reader("GKE operation");
  std::string detail_reason;
  std::vector<Condition> pool_conditions, cluster_conditions;
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    if (k == "name") r.String(f, k, &op->name);
    else if (k == "operationType") r.String(f, k, &op->operation_type);
    else if (k == "status") r.String(f, k, &op->status);
    else if (k == "targetLink") r.String(f, k, &op->target_link);
    else if (k == "selfLink") r.String(f, k, &op->self_link);
    else if (k == "location") r.String(f, k, &op->location);
    else if (k == "zone") zone_reader.String(f, k, &zone);
    else if (k == "statusMessage") r.String(f, k, &status_message);
    else if (k == "nodepoolConditions") ReadConditions(r, f, k, &pool_conditions);
    else if (k == "clusterConditions") ReadConditions(r, f, k, &cluster_conditions);
    else if (k == "error") {
      ondemand::Object e;
      if (!r.Object(f, k, &e)) return;
      ForEachField(e, [&](std::string_view k2, Value& g) {
        ondemand::Array details;
        if (k2 == "code") r.Int(g, k2, &op->error_code);
        else if (k2 == "message") r.String(g, k2, &op->error_message);
        else if (k2 == "details" && r.Array(g, k2, &details)) {
          detail_reason.clear();  // the first detail with a string reason
          for (auto item : details) {
            Value d = item.value();
            if (!detail_reason.empty() || d.type() != JsonType::object) continue;
            ForEachField(d.get_object(), [&](std::string_view k3, Value& h) {
              if (k3 == "reason" && h.type() == JsonType::string) detail_reason = std::string(std::string_view(h.get_string()));
            });
          }
        }
      });
    }
  });
  op->error_reason = detail_reason;
  if (op->location.empty()) {
    r.Adopt(zone_reader);
    op->location = zone;
  }
  if (op->location.empty()) op->location = SegmentAfter(op->self_link, "locations");
  if (op->location.empty()) op->location = SegmentAfter(op->self_link, "zones");
  op->project = project.empty() ? SegmentAfter(op->self_link, "projects") : project;
  // The first condition with a telling code, node pools' before the cluster's,
  // unless the error's details named a reason; conditions after it are not read.
  for (auto* conditions : {&pool_conditions, &cluster_conditions}) {
    if (!op->error_reason.empty()) continue;
    for (Condition& c : *conditions) {
      r.Adopt(c.code_reader);
      if (c.code.empty() || c.code == "UNKNOWN") continue;
      op->error_reason = c.code;
      if (op->error_message.empty()) {
        r.Adopt(c.message_reader);
        op->error_message = c.message;
      }
      break;
    }
  }
  // Older responses report a failure only in statusMessage.
  if (op->done() && op->error_message.empty() && op->error_code != 0) op->error_message = status_message;
  if (op->error_reason.empty()) op->error_reason = KnownFailureReason(op->error_message);
  return r.ok() ? Status::OK() : r.status();
}

}  // namespace

Result<std::vector<Operation>> ReadGkeOperationList(std::string& body, const std::string& project) {
  std::vector<Operation> out;
  FieldReader r("GKE operation list");
  Status op_error;
  const Status not_object = Status::InvalidArgument("operation list: expected a JSON object");
  Status s = ondemand::ReadDocument(body, not_object, [&](ondemand::Object list) -> Status {
    ForEachField(list, [&](std::string_view k, Value& f) {
      ondemand::Array ops;
      if (k != "operations" || !r.Array(f, k, &ops)) return;
      out.clear();
      for (auto item : ops) {
        Value ov = item.value();
        Operation op;
        Status os = ReadGkeOperation(ov, project, &op);
        if (!os.ok() && op_error.ok()) op_error = os;
        if (op_error.ok()) out.push_back(std::move(op));
      }
    });
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (!op_error.ok()) return op_error;
  if (!r.ok()) return r.status();
  return out;
}

Result<std::vector<Cluster>> ReadClusterList(std::string& body, const std::string& project) {
  std::vector<Cluster> out;
  std::vector<std::string> missing;
  FieldReader r("cluster list");
  Status cluster_error;
  const Status not_object = Status::InvalidArgument("cluster list: expected a JSON object");
  Status s = ondemand::ReadDocument(body, not_object, [&](ondemand::Object list) -> Status {
    ForEachField(list, [&](std::string_view k, Value& f) {
      if (k == "missingZones") {
        r.Strings(f, k, &missing);
      } else if (k == "clusters") {
        ondemand::Array clusters;
        if (!r.Array(f, k, &clusters)) return;
        for (auto item : clusters) {
          Value cv = item.value();
          Cluster c;
          Status cs = ReadCluster(cv, project, &c);
          if (!cs.ok() && cluster_error.ok()) cluster_error = cs;
          if (cluster_error.ok()) out.push_back(std::move(c));
        }
      }
    });
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (!missing.empty()) {
    std::string zones;
    for (const auto& z : missing) zones += (zones.empty() ? "" : ", ") + z;
    return Status::Unavailable("cluster list of project " + project + " is missing zones " + zones);
  }
  if (!cluster_error.ok()) return cluster_error;
  if (!r.ok()) return r.status();
  return out;
}

}  // namespace tpu::cloud
