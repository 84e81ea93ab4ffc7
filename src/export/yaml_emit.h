// Writing manifests as a person would: block style, strings quoted only when
// YAML would read them as something else, numbers and booleans where the
// schemas want them, and the header and annotations every kind shares.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cloud/types.h"
#include "manifest/types.h"

namespace tpu::exporter {

// GKE's taint effect ("NO_SCHEDULE") as Kubernetes spells it ("NoSchedule").
std::string KubeEffect(const std::string& gke);
YAML::Node StringMapNode(const cloud::StringMap& m);
YAML::Node ListNode(const std::vector<std::string>& v);  // a flow-style list
// The document as YAML text, ending in a newline.
std::string Emit(const YAML::Node& doc);
// apiVersion, kind and metadata.name.
YAML::Node Header(const char* api_version, const char* kind, const std::string& name);
// metadata.annotations for those that are set.
void Annotate(YAML::Node& doc, const manifest::Annotations& a);

}  // namespace tpu::exporter
