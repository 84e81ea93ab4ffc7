// The list + watch loop with re-list on 410 Gone.
#include "kube/list_watch.h"

#include "kube/status_errors.h"

namespace tpu::kube {
namespace {

std::string KeyOf(const json& obj) {
  const json& meta = obj["metadata"];
  return meta.value("namespace", "") + "/" + meta.value("name", "");
}

}  // namespace

ListWatcher::ListWatcher(KubeClient& client, ResourceRef ref, std::string ns, ListOptions selectors)
    : client_(client), ref_(std::move(ref)), ns_(std::move(ns)), selectors_(std::move(selectors)) {}

Status ListWatcher::Relist(const std::function<bool(const WatchEvent&)>& on_change) {
  auto list = client_.List(ref_, ns_, selectors_);
  if (!list.ok()) return list.status();
  objects_.clear();
  for (auto& item : list->items) {
    std::string key = KeyOf(item);  // before the move: `=` evaluates its right side first
    objects_[key] = std::move(item);
  }
  resource_version_ = list->resource_version;
  ++lists_;
  on_change({"RELISTED", nullptr});
  return Status::OK();
}

Status ListWatcher::Step(const std::function<bool(const WatchEvent&)>& on_change,
                         int watch_timeout_seconds, http::CancelToken* cancel) {
  if (resource_version_.empty()) {
    if (Status s = Relist(on_change); !s.ok()) return s;
  }
  WatchOptions options;
  options.resource_version = resource_version_;
  options.allow_bookmarks = true;
  options.timeout_seconds = watch_timeout_seconds;
  options.label_selector = selectors_.label_selector;
  options.field_selector = selectors_.field_selector;
  options.cancel = cancel;
  Status s = client_.Watch(ref_, ns_, options, [&](const WatchEvent& e) {
    std::string rv = e.object.is_object() && e.object.contains("metadata")
                         ? e.object["metadata"].value("resourceVersion", "")
                         : "";
    if (!rv.empty()) resource_version_ = rv;
    if (cancel && cancel->cancelled()) return false;
    if (e.type == "BOOKMARK") return true;
    if (e.type == "DELETED") {
      objects_.erase(KeyOf(e.object));
    } else {
      objects_[KeyOf(e.object)] = e.object;
    }
    return on_change(e);
  });
  if (IsGone(s)) {
    // Events were lost: only a fresh list gives a correct picture.
    resource_version_.clear();
    return Relist(on_change);
  }
  return s;
}

}  // namespace tpu::kube
