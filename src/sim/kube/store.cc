// The object store: writes, the shared version counter, history for watches.
#include "sim/kube/store.h"

#include <cstdio>
#include <ctime>

#include "sim/kube/managed_fields.h"
#include "sim/kube/selector.h"

namespace tpu::kubesim {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::string Now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "clusterqueues.kueue.x-k8s.io", or "pods" for the core group, as in messages.
std::string Qualified(const ResourceType& type) {
  return type.group.empty() ? type.resource : type.resource + "." + type.group;
}

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool Unhex(const std::string& s, std::string* out) {
  if (s.size() % 2) return false;
  for (size_t i = 0; i < s.size(); i += 2) {
    int v = 0;
    if (std::sscanf(s.c_str() + i, "%2x", &v) != 1) return false;
    out->push_back(static_cast<char>(v));
  }
  return true;
}

// The object without metadata and status: what metadata.generation counts.
json SpecOf(const json& obj) {
  json copy = obj;
  copy.erase("metadata");
  copy.erase("status");
  return copy;
}

Reply Conflict409(const ResourceType& type, const std::string& name) {
  return StatusReply(409, "Conflict",
                     "Operation cannot be fulfilled on " + Qualified(type) + " \"" + name +
                         "\": the object has been modified; please apply your changes to the "
                         "latest version and try again",
                     {{"name", name}, {"group", type.group}, {"kind", type.resource}});
}

bool StaleVersion(const json& incoming, const json& live) {
  if (!incoming.contains("metadata") || !incoming["metadata"].contains("resourceVersion")) {
    return false;
  }
  const auto& rv = incoming["metadata"]["resourceVersion"];
  return rv.is_string() && !rv.get<std::string>().empty() &&
         rv != live["metadata"]["resourceVersion"];
}

// Applies the subresource rule: writes to the object keep the old status;
// writes to /status change nothing else.
json ScopeToSubresource(const ResourceType& type, const json& incoming, const json* before,
                        const std::string& subresource) {
  if (subresource == "status") {
    json out = *before;
    if (incoming.contains("status")) {
      out["status"] = incoming["status"];
    } else {
      out.erase("status");
    }
    return out;
  }
  json out = incoming;
  if (type.status_subresource) {
    out.erase("status");
    if (before && before->contains("status")) out["status"] = (*before)["status"];
  }
  return out;
}

}  // namespace

Store::Store(size_t history_limit) : history_limit_(history_limit) {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    json obj = {{"apiVersion", "v1"}, {"kind", "Namespace"},
                {"metadata", {{"name", ns}, {"uid", "ns-" + std::string(ns)},
                              {"creationTimestamp", Now()}, {"resourceVersion", "1"}}}};
    objects_["/namespaces"][Key("", ns)] = obj;
  }
}

Reply Store::CheckNamespace(const ResourceType& type, const std::string& ns) {
  if (!type.namespaced) return {};
  if (ns.empty()) return StatusReply(400, "BadRequest", "the namespace of the object is required");
  if (!objects_["/namespaces"].count(Key("", ns))) {
    return StatusReply(404, "NotFound", "namespaces \"" + ns + "\" not found",
                       {{"name", ns}, {"kind", "namespaces"}});
  }
  return {};
}

Reply Store::Get(const ResourceType& type, const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& bucket = objects_[type.StorageKey()];
  auto it = bucket.find(Key(ns, name));
  if (it == bucket.end()) return NotFoundReply(Qualified(type), name);
  json obj = it->second;
  obj["apiVersion"] = type.ApiVersion();
  return {200, obj};
}

Reply Store::List(const ResourceType& type, const std::string& ns, const ListOptions& options) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t list_version = version_;
  std::string start;
  if (!options.continue_token.empty()) {
    std::string raw;
    size_t bar;
    if (!Unhex(options.continue_token, &raw) || (bar = raw.find('|')) == std::string::npos) {
      return StatusReply(400, "BadRequest", "continue key is not valid");
    }
    list_version = std::stoull(raw.substr(0, bar));
    start = raw.substr(bar + 1);
    if (list_version < compacted_) {
      return StatusReply(410, "Expired",
                         "The provided continue parameter is too old to display a consistent "
                         "list result. You can start a new list without the continue parameter.");
    }
  }
  json items = json::array();
  std::string error, last;
  int64_t remaining = 0;
  const auto& bucket = objects_[type.StorageKey()];
  for (auto it = start.empty() ? bucket.begin() : bucket.upper_bound(start); it != bucket.end();
       ++it) {
    const json& obj = it->second;
    if (type.namespaced && !ns.empty() && obj["metadata"].value("namespace", "") != ns) continue;
    if (!MatchesLabels(obj, options.label_selector, &error) ||
        !MatchesFields(obj, options.field_selector, &error)) {
      if (!error.empty()) return StatusReply(400, "BadRequest", error);
      continue;
    }
    if (options.limit > 0 && static_cast<int64_t>(items.size()) >= options.limit) {
      ++remaining;
      continue;
    }
    json item = obj;
    item["apiVersion"] = type.ApiVersion();
    items.push_back(std::move(item));
    last = it->first;
  }
  json meta = {{"resourceVersion", std::to_string(list_version)}};
  if (remaining > 0) {
    meta["continue"] = Hex(std::to_string(list_version) + "|" + last);
    meta["remainingItemCount"] = remaining;
  }
  return {200, {{"apiVersion", type.ApiVersion()}, {"kind", type.kind + "List"},
                {"metadata", meta}, {"items", items}}};
}

void Store::Record(const ResourceType& type, const std::string& ns, const std::string& event_type,
                   const json& obj) {
  history_.push_back({type.StorageKey(), ns, {event_type, obj, version_}});
  while (history_.size() > history_limit_) {
    compacted_ = history_.front().event.resource_version;
    history_.pop_front();
  }
  changed_.notify_all();
}

// Finishes a write: server-set metadata, a new version, the watch event.
Reply Store::Commit(const ResourceType& type, const std::string& ns, json obj,
                    const json* before, const WriteContext& w) {
  json& meta = obj["metadata"];
  const std::string name = meta["name"];
  if (type.namespaced) meta["namespace"] = ns;
  if (before) {
    const json& old = (*before)["metadata"];
    meta["uid"] = old["uid"];
    meta["creationTimestamp"] = old["creationTimestamp"];
    meta["generation"] = old.value("generation", 1) + (SpecOf(obj) != SpecOf(*before) ? 1 : 0);
    if (old.contains("deletionTimestamp")) meta["deletionTimestamp"] = old["deletionTimestamp"];
  } else {
    meta["uid"] = "uid-" + std::to_string(++uid_counter_);
    meta["creationTimestamp"] = Now();
    meta["generation"] = 1;
  }
  obj["apiVersion"] = type.ApiVersion();
  obj["kind"] = type.kind;
  meta["resourceVersion"] = std::to_string(++version_);
  ++writes_[w.field_manager];
  auto& bucket = objects_[type.StorageKey()];
  // An object being deleted goes once its last finalizer is removed.
  bool finalized = meta.contains("deletionTimestamp") &&
                   (!meta.contains("finalizers") || meta["finalizers"].empty());
  if (finalized) {
    bucket.erase(Key(ns, name));
    Record(type, ns, "DELETED", obj);
    return {200, obj};
  }
  bucket[Key(ns, name)] = obj;
  Record(type, ns, before ? "MODIFIED" : "ADDED", obj);
  return {before ? 200 : 201, obj};
}

Reply Store::Create(const ResourceType& type, const std::string& ns, json obj,
                    const WriteContext& w) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Reply r = CheckNamespace(type, ns); !r.ok()) return r;
  if (!obj.is_object()) return StatusReply(400, "BadRequest", "the body must be a JSON object");
  json& meta = obj["metadata"];
  if (!meta.is_object()) meta = json::object();
  if (meta.value("name", "").empty() && !meta.value("generateName", "").empty()) {
    meta["name"] = meta["generateName"].get<std::string>() + std::to_string(version_ + 1);
  }
  const std::string name = meta.value("name", "");
  if (name.empty()) {
    return StatusReply(422, "Invalid", type.kind + " \"\" is invalid: metadata.name: Required value");
  }
  if (obj.contains("kind") && obj["kind"] != type.kind) {
    return StatusReply(400, "BadRequest", "the kind of the object (" + obj["kind"].dump() +
                                              ") does not match " + type.kind);
  }
  auto& bucket = objects_[type.StorageKey()];
  if (bucket.count(Key(ns, name))) {
    return StatusReply(409, "AlreadyExists", Qualified(type) + " \"" + name + "\" already exists",
                       {{"name", name}, {"group", type.group}, {"kind", type.resource}});
  }
  meta.erase("resourceVersion");
  if (type.status_subresource) obj.erase("status");
  auto entries = ReadManagedFields(json::object());
  RecordUpdate(entries, nullptr, obj, {w.field_manager, type.ApiVersion(), "", Now()},
               type.list_types);
  WriteManagedFields(obj, entries);
  return Commit(type, ns, std::move(obj), nullptr, w);
}

Reply Store::Update(const ResourceType& type, const std::string& ns, const std::string& name,
                    json obj, const WriteContext& w) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& bucket = objects_[type.StorageKey()];
  auto it = bucket.find(Key(ns, name));
  if (it == bucket.end()) return NotFoundReply(Qualified(type), name);
  const json before = it->second;
  if (!obj.is_object() || obj["metadata"].value("name", name) != name) {
    return StatusReply(400, "BadRequest", "the name of the object does not match the name on the URL");
  }
  if (StaleVersion(obj, before)) return Conflict409(type, name);
  json next = ScopeToSubresource(type, obj, &before, w.subresource);
  next["metadata"]["name"] = name;
  auto entries = ReadManagedFields(before);
  RecordUpdate(entries, before, next, {w.field_manager, type.ApiVersion(), w.subresource, Now()},
               type.list_types);
  WriteManagedFields(next, entries);
  return Commit(type, ns, std::move(next), &before, w);
}

Reply Store::MergePatch(const ResourceType& type, const std::string& ns, const std::string& name,
                        const json& patch, const WriteContext& w) {
  json current;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& bucket = objects_[type.StorageKey()];
    auto it = bucket.find(Key(ns, name));
    if (it == bucket.end()) return NotFoundReply(Qualified(type), name);
    current = it->second;
  }
  if (!patch.is_object()) return StatusReply(400, "BadRequest", "a merge patch must be an object");
  if (StaleVersion(patch, current)) return Conflict409(type, name);
  json next = current;
  next.merge_patch(patch);
  // Update re-checks the version under the lock, so a write in between is a 409.
  next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"];
  next["metadata"]["name"] = name;
  return Update(type, ns, name, std::move(next), w);
}

Reply Store::Apply(const ResourceType& type, const std::string& ns, const std::string& name,
                   const json& applied, bool force, const WriteContext& w) {
  std::lock_guard<std::mutex> lock(mu_);
  if (w.field_manager.empty()) {
    return StatusReply(400, "BadRequest",
                       "PATCH, application/apply-patch+yaml: fieldManager is required");
  }
  if (!applied.is_object() || applied.value("apiVersion", "") != type.ApiVersion() ||
      applied.value("kind", "") != type.kind) {
    return StatusReply(400, "BadRequest",
                       "apply configuration must set apiVersion " + type.ApiVersion() +
                           " and kind " + type.kind);
  }
  if (!applied.contains("metadata") || applied["metadata"].value("name", "") != name) {
    return StatusReply(400, "BadRequest", "the name of the object does not match the name on the URL");
  }
  auto& bucket = objects_[type.StorageKey()];
  auto it = bucket.find(Key(ns, name));
  const bool exists = it != bucket.end();
  if (!exists) {
    if (w.subresource == "status") return NotFoundReply(Qualified(type), name);
    if (Reply r = CheckNamespace(type, ns); !r.ok()) return r;
  }
  const json before = exists ? it->second : json(nullptr);
  if (exists && StaleVersion(applied, before)) return Conflict409(type, name);

  json config = applied;
  config["metadata"].erase("resourceVersion");
  if (w.subresource == "status") {
    config = {{"apiVersion", applied["apiVersion"]}, {"kind", applied["kind"]},
              {"metadata", {{"name", name}}}, {"status", applied.value("status", json::object())}};
  } else if (type.status_subresource) {
    config.erase("status");
  }
  auto entries = ReadManagedFields(before);
  ApplyResult result =
      ApplyConfig(entries, before, config,
                  {w.field_manager, type.ApiVersion(), w.subresource, Now()}, force,
                  type.list_types);
  if (!result.conflicts.empty()) {
    std::string message = "Apply failed with " + std::to_string(result.conflicts.size()) +
                          " conflict" + (result.conflicts.size() > 1 ? "s" : "") + ":";
    json causes = json::array();
    for (const auto& c : result.conflicts) {
      std::string what = "conflict with \"" + c.manager + "\"";
      message += " " + what + ": " + PathString(c.path);
      causes.push_back({{"reason", "FieldManagerConflict"}, {"message", what},
                        {"field", PathString(c.path)}});
    }
    return StatusReply(409, "Conflict", message,
                       {{"name", name}, {"group", type.group}, {"kind", type.resource},
                        {"causes", causes}});
  }
  json next = std::move(result.object);
  next["metadata"]["name"] = name;
  WriteManagedFields(next, entries);
  return Commit(type, ns, std::move(next), exists ? &before : nullptr, w);
}

Reply Store::Delete(const ResourceType& type, const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& bucket = objects_[type.StorageKey()];
  auto it = bucket.find(Key(ns, name));
  if (it == bucket.end()) return NotFoundReply(Qualified(type), name);
  json obj = it->second;
  json& meta = obj["metadata"];
  if (meta.contains("finalizers") && !meta["finalizers"].empty()) {
    if (!meta.contains("deletionTimestamp")) {
      meta["deletionTimestamp"] = Now();
      meta["resourceVersion"] = std::to_string(++version_);
      it->second = obj;
      Record(type, ns, "MODIFIED", obj);
    }
    obj["apiVersion"] = type.ApiVersion();
    return {202, obj};
  }
  bucket.erase(it);
  meta["resourceVersion"] = std::to_string(++version_);
  obj["apiVersion"] = type.ApiVersion();
  Record(type, ns, "DELETED", obj);
  return {200, obj};
}

WatchBatch Store::WaitEvents(const ResourceType& type, const std::string& ns, uint64_t after,
                             std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t wakeups = wakeups_;
  WatchBatch batch;
  for (;;) {
    if (after < compacted_) {
      batch.gone = true;
      return batch;
    }
    for (const auto& change : history_) {
      if (change.event.resource_version <= after || change.storage_key != type.StorageKey()) {
        continue;
      }
      if (type.namespaced && !ns.empty() && change.ns != ns) continue;
      WatchEvent e = change.event;
      e.object["apiVersion"] = type.ApiVersion();
      batch.events.push_back(std::move(e));
    }
    batch.resource_version = version_;
    batch.shutdown = shutdown_;
    if (!batch.events.empty() || shutdown_ || wakeups_ != wakeups) return batch;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      batch.resource_version = version_;
      return batch;
    }
  }
}

void Store::WakeWatchers() {
  std::lock_guard<std::mutex> lock(mu_);
  ++wakeups_;
  changed_.notify_all();
}

uint64_t Store::CurrentVersion() {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

void Store::TEST_Compact() {
  std::lock_guard<std::mutex> lock(mu_);
  history_.clear();
  compacted_ = version_;
}

std::map<std::string, int> Store::WritesByManager() {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

void Store::Shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutdown_ = true;
  changed_.notify_all();
}

}  // namespace tpu::kubesim
