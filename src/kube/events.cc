// Event creation with count bumping on repeats.
#include "kube/events.h"

#include <functional>
#include <sstream>

#include "kube/status_errors.h"

namespace tpu::kube {

Status EventRecorder::Record(const ObjectRef& about, const std::string& type, const std::string& reason,
                             const std::string& message, const std::string& key) {
  const std::string ns = about.ns.empty() ? default_namespace_ : about.ns;
  std::ostringstream hash;
  hash << std::hex << std::hash<std::string>{}(about.kind + "/" + reason + "/" + key);
  std::string name = about.name + "." + hash.str();
  const std::string now = FormatTime(clock_.WallNow());
  auto existing = client_.Get(resources::kEvents, ns, name);
  if (existing.ok()) {
    json patch = {{"count", existing->value("count", 1) + 1}, {"lastTimestamp", now}, {"message", message},
                  {"type", type}};
    auto r = client_.MergePatch(resources::kEvents, ns, name, patch);
    return r.ok() ? Status::OK() : r.status();
  }
  if (!IsNotFound(existing.status())) return existing.status();
  json involved = {{"apiVersion", about.api_version}, {"kind", about.kind}, {"name", about.name}};
  if (!about.ns.empty()) involved["namespace"] = about.ns;
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"involvedObject", involved},
                {"reason", reason},
                {"message", message},
                {"type", type},
                {"count", 1},
                {"firstTimestamp", now},
                {"lastTimestamp", now},
                {"source", {{"component", kFieldManager}}},
                {"reportingComponent", kFieldManager}};
  auto r = client_.Create(resources::kEvents, ns, event);
  return r.ok() || IsAlreadyExists(r.status()) ? Status::OK() : r.status();
}

}  // namespace tpu::kube
