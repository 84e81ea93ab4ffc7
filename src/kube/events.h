// Kubernetes Events (core/v1) about objects we act on, so `kubectl describe`
// and `kubectl get events` show why the reconciler waits. Repeats of the same
// event bump its count instead of piling up new objects.
#pragma once

#include <string>

#include "kube/client.h"
#include "kube/timestamps.h"

namespace tpu::kube {

struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string ns;  // "" for cluster-scoped objects
};

class EventRecorder {
 public:
  // Events about cluster-scoped objects go to `default_namespace`.
  EventRecorder(KubeClient& client, Clock& clock, std::string default_namespace = "default")
      : client_(client), clock_(clock), default_namespace_(std::move(default_namespace)) {}

  // `key` tells repeats apart: the same object, reason and key update one Event.
  Status Record(const ObjectRef& about, const std::string& type, const std::string& reason,
                const std::string& message, const std::string& key = "");

 private:
  KubeClient& client_;
  Clock& clock_;
  std::string default_namespace_;
};

}  // namespace tpu::kube
