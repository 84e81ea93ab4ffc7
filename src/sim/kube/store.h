// The emulator's object store: every object by group/resource, namespace and
// name; one resourceVersion counter for all of them, as etcd's revision; and a
// bounded history of changes that watches read from. A watch that starts
// before the history window gets 410 Gone, as from a compacted etcd.
//
// Thread-safe: HTTP handler threads call it concurrently; watchers block in
// WaitEvents until a change, their deadline, or Shutdown.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "sim/kube/reply.h"
#include "sim/kube/resource_type.h"

namespace tpu::kubesim {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;           // 0: everything
  std::string continue_token;  // from a previous page's metadata.continue
};

struct WatchEvent {
  std::string type;  // ADDED | MODIFIED | DELETED
  json object;
  uint64_t resource_version = 0;
};

struct WatchBatch {
  std::vector<WatchEvent> events;
  uint64_t resource_version = 0;  // everything up to here has been looked at
  bool gone = false;              // the start version fell out of the history window
  bool shutdown = false;
};

// Who writes, and how: the fieldManager query parameter and the subresource
// ("" or "status") of the request.
struct WriteContext {
  std::string field_manager;
  std::string subresource;
};

class Store {
 public:
  // `history_limit`: how many changes watches can resume from.
  explicit Store(size_t history_limit = 1000);

  Reply Get(const ResourceType& type, const std::string& ns, const std::string& name);
  Reply List(const ResourceType& type, const std::string& ns, const ListOptions& options);
  Reply Create(const ResourceType& type, const std::string& ns, json obj, const WriteContext& w);
  Reply Update(const ResourceType& type, const std::string& ns, const std::string& name,
               json obj, const WriteContext& w);
  Reply MergePatch(const ResourceType& type, const std::string& ns, const std::string& name,
                   const json& patch, const WriteContext& w);
  Reply Apply(const ResourceType& type, const std::string& ns, const std::string& name,
              const json& applied, bool force, const WriteContext& w);
  Reply Delete(const ResourceType& type, const std::string& ns, const std::string& name);

  // The changes to `type` objects in `ns` ("" for all) after `after`, waiting
  // until there is one, `deadline` passes, or Shutdown. `after` = 0 is not a
  // valid start: callers synthesise ADDED events from a List instead.
  WatchBatch WaitEvents(const ResourceType& type, const std::string& ns, uint64_t after,
                        std::chrono::steady_clock::time_point deadline);
  // Wakes every watcher so it can send a bookmark (see the server).
  void WakeWatchers();

  uint64_t CurrentVersion();
  // Test hook: forgets the history, as an etcd compaction would; watches from
  // any earlier version now get 410 Gone.
  void TEST_Compact();
  // How many successful writes each field manager made.
  std::map<std::string, int> WritesByManager();
  void Shutdown();

 private:
  using Bucket = std::map<std::string, json>;  // "ns/name" -> object
  struct Change {
    std::string storage_key;
    std::string ns;
    WatchEvent event;
  };

  Reply Commit(const ResourceType& type, const std::string& ns, json obj, const json* before,
               const WriteContext& w);
  Reply CheckNamespace(const ResourceType& type, const std::string& ns);
  void Record(const ResourceType& type, const std::string& ns, const std::string& event_type,
              const json& obj);

  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t version_ = 1;
  uint64_t uid_counter_ = 0;
  uint64_t wakeups_ = 0;
  std::map<std::string, Bucket> objects_;  // by ResourceType::StorageKey()
  std::deque<Change> history_;
  uint64_t compacted_ = 0;  // watches from a version below this get 410
  size_t history_limit_;
  std::map<std::string, int> writes_;
  bool shutdown_ = false;
};

}  // namespace tpu::kubesim
