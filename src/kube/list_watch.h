// A local copy of one kind of object kept current with list + watch, as
// client-go's reflector does: list every page once, watch from the list's
// resourceVersion, move that version forward on bookmarks, and list again
// when the server answers 410 Gone (the version fell out of its history).
//
// Not thread-safe: one owner calls Step in a loop (the daemon's watch thread).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "kube/client.h"

namespace tpu::kube {

class ListWatcher {
 public:
  ListWatcher(KubeClient& client, ResourceRef ref, std::string ns = "", ListOptions selectors = {});

  // One round: a list when there is no version yet, then one watch until the
  // server ends the stream (after `watch_timeout_seconds`) or `on_change`
  // returns false. A 410 clears the version and lists again at once.
  // `on_change` sees ADDED/MODIFIED/DELETED after the cache is updated, and
  // {"RELISTED", null} after each list.
  // `cancel`, when given and cancelled (from any thread), ends the watch at
  // once with OK, so an owner that wants to quit need not wait for a change
  // or the stream's end.
  Status Step(const std::function<bool(const WatchEvent&)>& on_change, int watch_timeout_seconds = 300,
              http::CancelToken* cancel = nullptr);

  // "namespace/name" (or "/name" when cluster-scoped) -> object.
  const std::map<std::string, json>& objects() const { return objects_; }
  const std::string& resource_version() const { return resource_version_; }
  int lists() const { return lists_; }

 private:
  Status Relist(const std::function<bool(const WatchEvent&)>& on_change);

  KubeClient& client_;
  ResourceRef ref_;
  std::string ns_;
  ListOptions selectors_;
  std::map<std::string, json> objects_;
  std::string resource_version_;
  int lists_ = 0;
};

}  // namespace tpu::kube
