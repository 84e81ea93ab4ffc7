// The Compute aggregated list pages of list_reader.h, each item read as
// compute_wire.cc reads it. nlohmann keeps an object's keys sorted, so the
// client has always returned scopes by name and a repeated key's last value:
// the page is gathered per scope in a map to keep both. An item's error is
// the first in that order, and comes before an `unreachables` refusal.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "cloud/compute_wire.h"  // LastSegment, SegmentAfter
#include "cloud/list_reader.h"
#include "cloud/ondemand_fields.h"

namespace tpu::cloud {
namespace {

using ondemand::FieldReader;
using ondemand::ForEachField;
using ondemand::JsonType;
using ondemand::Value;

template <typename T>
struct Scope {
  std::vector<T> items;
  Status error;  // the first item's that failed
};

// read(item, scope, &out) → Status; OK with `out` unset skips the item.
template <typename T, typename ReadItem>
Result<AggregatedPage> ReadPage(std::string& body, std::string_view field, std::vector<T>* out, ReadItem read) {
  AggregatedPage page;
  std::map<std::string, Scope<T>, std::less<>> scopes;
  // Anything but an object holds no items (nlohmann's contains() on it is false).
  Status s = ondemand::ReadDocument(body, Status::OK(), [&](ondemand::Object top) -> Status {
    ForEachField(top, [&](std::string_view k, Value& v) {
      if (k == "items" && v.type() == JsonType::object) {
        ForEachField(v.get_object(), [&](std::string_view scope_key, Value& list) {
          Scope<T>& scope = scopes[std::string(scope_key)] = Scope<T>{};
          if (list.type() != JsonType::object) return;
          const std::string& name = scopes.find(scope_key)->first;
          ForEachField(list.get_object(), [&](std::string_view k2, Value& items) {
            if (k2 != field || items.type() != JsonType::array) return;
            scope.items.clear();  // a repeated key: its last value counts
            scope.error = Status::OK();
            for (auto result : items.get_array()) {
              Value item = result.value();
              std::optional<T> t;
              Status is = read(item, name, &t);
              if (!is.ok() && scope.error.ok()) scope.error = is;
              if (scope.error.ok() && t) scope.items.push_back(std::move(*t));
            }
          });
        });
      } else if (k == "unreachables" && v.type() == JsonType::array) {
        // Rare, so worded exactly as before by the JSON library that wrote it then.
        ondemand::Array array = v.get_array();
        auto scopes_left = nlohmann::json::parse(std::string_view(array.raw_json()), nullptr, false);
        if (scopes_left.is_discarded()) throw simdjson::simdjson_error(simdjson::TAPE_ERROR);
        page.unreachables = scopes_left.empty() ? "" : scopes_left.dump();
      } else if (k == "nextPageToken") {
        page.next_page_token = v.type() == JsonType::string ? std::string(std::string_view(v.get_string())) : "";
      }
    });
    return Status::OK();
  });
  if (!s.ok()) return s;
  for (auto& [name, scope] : scopes)
    if (!scope.error.ok()) return scope.error;
  for (auto& [name, scope] : scopes)
    for (auto& t : scope.items) out->push_back(std::move(t));
  return page;
}

Status NotObject(Value& v, const char* what) {
  return Status::InvalidArgument(std::string(what) + ": expected a JSON object");
}

Status ReadWorkloadPolicy(Value& v, std::string_view scope, std::optional<WorkloadPolicy>* out) {
  if (v.type() != JsonType::object) return Status::OK();  // not a workload policy: skipped
  WorkloadPolicy p;
  FieldReader r("resource policy");
  bool workload = false;
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    if (k == "name") r.String(f, k, &p.name);
    else if (k == "region") r.String(f, k, &p.region);
    else if (k == "description") r.String(f, k, &p.description);
    else if (k == "status") r.String(f, k, &p.status);
    else if (k == "selfLink") r.String(f, k, &p.self_link);
    else if (k == "workloadPolicy" && f.type() == JsonType::object) {
      workload = true;
      ForEachField(f.get_object(), [&](std::string_view k2, Value& g) {
        if (k2 == "type") r.String(g, k2, &p.type);
        else if (k2 == "acceleratorTopology") r.String(g, k2, &p.accelerator_topology);
        else if (k2 == "acceleratorTopologyMode") r.String(g, k2, &p.accelerator_topology_mode);
      });
    } else if (k == "workloadPolicy") {
      workload = false;
    }
  });
  // Other resource policies (snapshot schedules, placement …) are not read at all.
  if (!workload) return Status::OK();
  if (!r.ok()) return r.status();
  p.region = LastSegment(p.region);
  if (p.region.empty()) p.region = LastSegment(std::string(scope));
  *out = std::move(p);
  return Status::OK();
}

// properties.disks[]: the boot disk's initializeParams (the only disk's, when
// there is one). A disk's initializeParams may come before its `boot`, so it
// is read ahead and counts only for the disk chosen; disks after it are not read.
void ReadDisks(FieldReader& r, ondemand::Array disks, InstanceTemplate* t) {
  const size_t count = disks.count_elements();
  for (auto result : disks) {
    Value d = result.value();
    if (d.type() != JsonType::object) {
      if (count > 1) continue;
      break;
    }
    bool boot = false, has_init = false;
    std::string source_image;
    std::optional<int> size;
    std::optional<std::string> disk_type;
    FieldReader init_reader("instance template");
    ForEachField(d.get_object(), [&](std::string_view k, Value& f) {
      if (k == "boot") {
        r.Bool(f, k, &boot);
      } else if (k == "initializeParams") {
        ondemand::Object init;
        if (!init_reader.Object(f, k, &init)) return;
        has_init = true;
        ForEachField(init, [&](std::string_view k2, Value& g) {
          if (k2 == "sourceImage") init_reader.String(g, k2, &source_image);
          else if (k2 == "diskSizeGb") init_reader.Int(g, k2, &size);
          else if (k2 == "diskType") init_reader.String(g, k2, &disk_type);
        });
      }
    });
    if (!boot && count > 1) continue;
    r.Adopt(init_reader);
    if (has_init) {
      if (!source_image.empty()) t->source_image = source_image;
      if (size) t->boot_disk_size_gb = size;
      if (disk_type) t->disk_type = disk_type;
    }
    break;
  }
}

void ReadTemplateProperties(FieldReader& r, ondemand::Object props, InstanceTemplate* t) {
  ForEachField(props, [&](std::string_view k, Value& f) {
    ondemand::Object o;
    ondemand::Array a;
    if (k == "machineType") {
      r.String(f, k, &t->machine_type);
    } else if (k == "scheduling") {
      if (r.Object(f, k, &o))
        ForEachField(o, [&](std::string_view k2, Value& g) {
          if (k2 == "provisioningModel") r.String(g, k2, &t->provisioning_model);
          else if (k2 == "onHostMaintenance") r.String(g, k2, &t->on_host_maintenance);
          else if (k2 == "instanceTerminationAction") r.String(g, k2, &t->instance_termination_action);
        });
    } else if (k == "reservationAffinity") {
      if (r.Object(f, k, &o))
        ForEachField(o, [&](std::string_view k2, Value& g) {
          if (k2 != "values") return;
          std::vector<std::string> values;
          r.Strings(g, k2, &values);
          if (!values.empty()) t->reservation = values.front();
        });
    } else if (k == "disks") {
      if (r.Array(f, k, &a)) ReadDisks(r, a, t);
    } else if (k == "networkInterfaces") {
      if (!r.Array(f, k, &a)) return;
      for (auto result : a) {  // the first interface's subnetwork
        Value nic = result.value();
        if (nic.type() == JsonType::object)
          ForEachField(nic.get_object(), [&](std::string_view k2, Value& g) {
            if (k2 == "subnetwork") r.String(g, k2, &t->subnetwork);
          });
        break;
      }
    } else if (k == "serviceAccounts") {
      if (!r.Array(f, k, &a)) return;
      for (auto result : a) {
        Value sa = result.value();
        if (sa.type() != JsonType::object) continue;
        std::string email;
        ForEachField(sa.get_object(), [&](std::string_view k2, Value& g) {
          if (k2 == "email") r.String(g, k2, &email);
        });
        if (!email.empty()) t->service_accounts.push_back(email);
      }
    } else if (k == "tags") {
      if (r.Object(f, k, &o))
        ForEachField(o, [&](std::string_view k2, Value& g) {
          if (k2 == "items") r.Strings(g, k2, &t->network_tags);
        });
    } else if (k == "metadata") {
      if (!r.Object(f, k, &o)) return;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 != "items" || !r.Array(g, k2, &a)) return;
        for (auto result : a) {
          Value item = result.value();
          std::string key, value;
          if (item.type() == JsonType::object)
            ForEachField(item.get_object(), [&](std::string_view k3, Value& h) {
              if (k3 == "key") r.String(h, k3, &key);
              else if (k3 == "value") r.String(h, k3, &value);
            });
          t->metadata[key] = value;
        }
      });
    }
  });
}

Status ReadInstanceTemplate(Value& v, std::string_view, std::optional<InstanceTemplate>* out) {
  if (v.type() != JsonType::object) return NotObject(v, "instance template");
  InstanceTemplate t;
  FieldReader r("instance template");
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    ondemand::Object props;
    if (k == "name") r.String(f, k, &t.name);
    else if (k == "description") r.String(f, k, &t.description);
    else if (k == "selfLink") r.String(f, k, &t.self_link);
    else if (k == "properties" && r.Object(f, k, &props)) ReadTemplateProperties(r, props, &t);
  });
  if (!r.ok()) return r.status();
  *out = std::move(t);
  return Status::OK();
}

Status ReadInstanceGroupManager(Value& v, std::string_view scope, std::optional<InstanceGroupManager>* out) {
  if (v.type() != JsonType::object) return NotObject(v, "instance group manager");
  InstanceGroupManager m;
  FieldReader r("instance group manager");
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    ondemand::Object o;
    if (k == "name") r.String(f, k, &m.name);
    else if (k == "zone") r.String(f, k, &m.zone);
    else if (k == "description") r.String(f, k, &m.description);
    else if (k == "instanceTemplate") r.String(f, k, &m.instance_template);
    else if (k == "baseInstanceName") r.String(f, k, &m.base_instance_name);
    else if (k == "targetSize") r.Int(f, k, &m.target_size);
    else if (k == "selfLink") r.String(f, k, &m.self_link);
    else if (k == "targetSizePolicy" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "mode") r.String(g, k2, &m.target_size_policy_mode);
      });
    else if (k == "resourcePolicies" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "workloadPolicy") r.String(g, k2, &m.workload_policy);
      });
    else if (k == "status" && r.Object(f, k, &o)) {
      bool stable = false;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "isStable") r.Bool(g, k2, &stable);
      });
      m.status = stable ? "STABLE" : "UPDATING";
    } else if (k == "currentActions" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        MigCurrentActions& a = m.current_actions;
        if (k2 == "creating") r.Int(g, k2, &a.creating);
        else if (k2 == "creatingWithoutRetries") r.Int(g, k2, &a.creating_without_retries);
        else if (k2 == "deleting") r.Int(g, k2, &a.deleting);
        else if (k2 == "none") r.Int(g, k2, &a.none);
        else if (k2 == "recreating") r.Int(g, k2, &a.recreating);
        else if (k2 == "verifying") r.Int(g, k2, &a.verifying);
      });
  });
  if (!r.ok()) return r.status();
  m.zone = LastSegment(m.zone);
  if (m.zone.empty()) m.zone = LastSegment(std::string(scope));
  *out = std::move(m);
  return Status::OK();
}

Status ReadReservation(Value& v, std::string_view scope, const std::string& project,
                       std::optional<Reservation>* out) {
  if (v.type() != JsonType::object) return NotObject(v, "reservation");
  Reservation res;
  FieldReader r("reservation");
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    ondemand::Object o;
    if (k == "name") r.String(f, k, &res.name);
    else if (k == "zone") r.String(f, k, &res.zone);
    else if (k == "selfLink") r.String(f, k, &res.self_link);
    else if (k == "status") r.String(f, k, &res.status);
    else if (k == "specificReservationRequired") r.Bool(f, k, &res.specific_reservation_required);
    else if (k == "deploymentType") r.String(f, k, &res.deployment_type);
    else if (k == "specificReservation" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        ondemand::Object props;
        if (k2 == "count") r.Int(g, k2, &res.count);
        else if (k2 == "inUseCount") r.Int(g, k2, &res.in_use_count);
        else if (k2 == "instanceProperties" && r.Object(g, k2, &props))
          ForEachField(props, [&](std::string_view k3, Value& h) {
            if (k3 == "machineType") r.String(h, k3, &res.machine_type);
          });
      });
    else if (k == "shareSettings" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        ondemand::Object map;
        if (k2 == "shareType") r.String(g, k2, &res.share_type);
        else if (k2 == "projectMap" && r.Object(g, k2, &map)) {
          res.shared_with.clear();
          ForEachField(map, [&](std::string_view key, Value&) { res.shared_with.emplace_back(key); });
        }
      });
    else if (k == "resourceStatus" && r.Object(f, k, &o))
      ForEachField(o, [&](std::string_view k2, Value& g) {
        if (k2 == "reservationBlockCount") r.Int(g, k2, &res.block_count);
      });
  });
  if (!r.ok()) return r.status();
  // projectMap's keys as nlohmann listed them: sorted, once each.
  std::sort(res.shared_with.begin(), res.shared_with.end());
  res.shared_with.erase(std::unique(res.shared_with.begin(), res.shared_with.end()), res.shared_with.end());
  res.zone = LastSegment(res.zone);
  if (res.zone.empty()) res.zone = LastSegment(std::string(scope));
  res.project = SegmentAfter(res.self_link, "projects");
  if (res.project.empty()) res.project = project;
  *out = std::move(res);
  return Status::OK();
}

Status ReadComputeOperation(Value& v, std::string_view scope, const std::string& project, bool only_running,
                            std::optional<Operation>* out) {
  if (v.type() != JsonType::object) return NotObject(v, "Compute operation");
  Operation op;
  op.api = Operation::Api::kCompute;
  FieldReader r("Compute operation");
  std::string zone, region;
  bool has_error = false;
  std::string http_error_message;
  FieldReader message_reader("Compute operation");  // httpErrorMessage counts only as a fallback
  ForEachField(v.get_object(), [&](std::string_view k, Value& f) {
    ondemand::Object o;
    if (k == "name") r.String(f, k, &op.name);
    else if (k == "operationType") r.String(f, k, &op.operation_type);
    else if (k == "status") r.String(f, k, &op.status);
    else if (k == "targetLink") r.String(f, k, &op.target_link);
    else if (k == "selfLink") r.String(f, k, &op.self_link);
    else if (k == "zone") r.String(f, k, &zone);
    else if (k == "region") r.String(f, k, &region);
    else if (k == "httpErrorStatusCode") r.Int(f, k, &op.error_code);
    else if (k == "httpErrorMessage") message_reader.String(f, k, &http_error_message);
    else if (k == "error" && r.Object(f, k, &o)) {
      has_error = true;
      ForEachField(o, [&](std::string_view k2, Value& g) {
        ondemand::Array errors;
        if (k2 != "errors" || !r.Array(g, k2, &errors)) return;
        for (auto result : errors) {  // the first error's code and message
          Value e = result.value();
          if (e.type() == JsonType::object)
            ForEachField(e.get_object(), [&](std::string_view k3, Value& h) {
              if (k3 == "code") r.String(h, k3, &op.error_reason);
              else if (k3 == "message") r.String(h, k3, &op.error_message);
            });
          break;
        }
      });
    }
  });
  SetOperationScope(zone, region, project, &op);
  if (has_error) {
    if (op.error_message.empty()) {
      r.Adopt(message_reader);
      op.error_message = http_error_message;
    }
    if (op.error_message.empty()) op.error_message = op.error_reason.empty() ? "operation failed" : op.error_reason;
  }
  if (!r.ok()) return r.status();
  if (only_running && op.done()) return Status::OK();
  // Scope keys are "zones/Z", "regions/R" or "global".
  if (op.scope == "global" && scope != "global") {
    auto slash = scope.find('/');
    if (slash != std::string_view::npos) {
      op.scope = std::string(scope.substr(0, slash));
      op.location = std::string(scope.substr(slash + 1));
    }
  }
  *out = std::move(op);
  return Status::OK();
}

}  // namespace

Result<AggregatedPage> ReadWorkloadPolicyPage(std::string& body, std::vector<WorkloadPolicy>* out) {
  return ReadPage(body, "resourcePolicies", out, ReadWorkloadPolicy);
}

Result<AggregatedPage> ReadInstanceTemplatePage(std::string& body, std::vector<InstanceTemplate>* out) {
  return ReadPage(body, "instanceTemplates", out, ReadInstanceTemplate);
}

Result<AggregatedPage> ReadInstanceGroupManagerPage(std::string& body, std::vector<InstanceGroupManager>* out) {
  return ReadPage(body, "instanceGroupManagers", out, ReadInstanceGroupManager);
}

Result<AggregatedPage> ReadReservationPage(std::string& body, const std::string& project,
                                           std::vector<Reservation>* out) {
  return ReadPage(body, "reservations", out, [&](Value& v, std::string_view scope, std::optional<Reservation>* r) {
    return ReadReservation(v, scope, project, r);
  });
}

Result<AggregatedPage> ReadComputeOperationPage(std::string& body, const std::string& project, bool only_running,
                                                std::vector<Operation>* out) {
  return ReadPage(body, "operations", out, [&](Value& v, std::string_view scope, std::optional<Operation>* op) {
    return ReadComputeOperation(v, scope, project, only_running, op);
  });
}

Result<AggregatedPage> ReadScopeOperationPage(std::string& body, const std::string& project, const std::string& scope,
                                              bool only_running, std::vector<Operation>* out) {
  AggregatedPage page;
  std::vector<Operation> items;
  Status first_error;
  Status s = ondemand::ReadDocument(body, Status::OK(), [&](ondemand::Object top) -> Status {
    ForEachField(top, [&](std::string_view k, Value& v) {
      if (k == "items" && v.type() == JsonType::array) {
        items.clear();  // a repeated key: its last value counts
        first_error = Status::OK();
        for (auto result : v.get_array()) {
          Value item = result.value();
          std::optional<Operation> op;
          Status is = ReadComputeOperation(item, scope, project, only_running, &op);
          if (!is.ok() && first_error.ok()) first_error = is;
          if (first_error.ok() && op) items.push_back(std::move(*op));
        }
      } else if (k == "nextPageToken") {
        page.next_page_token = v.type() == JsonType::string ? std::string(std::string_view(v.get_string())) : "";
      }
    });
    return Status::OK();
  });
  if (!s.ok()) return s;
  if (!first_error.ok()) return first_error;
  for (auto& op : items) out->push_back(std::move(op));
  return page;
}

}  // namespace tpu::cloud
