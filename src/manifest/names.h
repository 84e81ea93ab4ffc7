// Name rules the manifests must follow before anything reaches an API:
// Kubernetes label keys and values (also used for taints), GCP resource labels,
// RFC 1035 names, GCP project ids and GKE cluster names. Each check returns ""
// when the text is valid, else what was expected, phrased for an error message.
#pragma once

#include <string>
#include <string_view>

namespace tpu::manifest {

// GKE node pool names: at most 40 characters.
constexpr size_t kMaxNodePoolName = 40;

// A Kubernetes label key: optional DNS-subdomain prefix (≤ 253) and "/", then
// a name of ≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
std::string CheckLabelKey(std::string_view key);
// A Kubernetes label value: empty, or ≤ 63 characters like a key's name part.
std::string CheckLabelValue(std::string_view value);
// A GCP resource label key: ≤ 63 lowercase letters, digits, '_' or '-', starting with a letter.
std::string CheckResourceLabelKey(std::string_view key);
// A GCP resource label value: ≤ 63 lowercase letters, digits, '_' or '-'; may be empty.
std::string CheckResourceLabelValue(std::string_view value);
// RFC 1035 label: lowercase letters, digits and '-', starting with a letter,
// ending with a letter or digit, at most `max` characters.
std::string CheckRfc1035(std::string_view name, size_t max);
// A GCP project id: 6–30 lowercase letters, digits or '-', starting with a
// letter, not ending with '-'.
std::string CheckProjectId(std::string_view id);

}  // namespace tpu::manifest
