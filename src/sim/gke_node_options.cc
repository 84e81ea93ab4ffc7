// Node option rules of a node pool create (see gke_node_options.h).
#include "sim/gke_node_options.h"

#include <cstdint>
#include <regex>
#include <string>

namespace tpu::sim {
namespace {

// proto3 JSON int64: a number or a decimal string; nullopt when neither.
std::optional<int64_t> Int64(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.find_first_not_of("-0123456789") != std::string::npos) return std::nullopt;
    try {
      return std::stoll(s);
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> CheckNodeOptions(const json& np) {
  // maxPodsConstraint: GKE allows 8 to 256 pods per node.
  if (np.contains("maxPodsConstraint")) {
    auto v = Int64(np["maxPodsConstraint"].value("maxPodsPerNode", json()));
    if (!v || *v < 8 || *v > 256)
      return BadRequest("max_pods_per_node must be between 8 and 256, got " +
                        np["maxPodsConstraint"].value("maxPodsPerNode", json()).dump() + ".");
  }
  const json cfg = np.value("config", json::object());
  // bootDiskKmsKey: "projects/[KEY_PROJECT_ID]/locations/[LOCATION]/keyRings/[RING_NAME]/cryptoKeys/[KEY_NAME]".
  if (cfg.contains("bootDiskKmsKey")) {
    static const std::regex kKey("^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$");
    const std::string key = cfg.value("bootDiskKmsKey", "");
    if (!key.empty() && !std::regex_match(key, kKey))
      return BadRequest("Invalid boot_disk_kms_key \"" + key +
                        "\": expected projects/*/locations/*/keyRings/*/cryptoKeys/*.");
  }
  // secondaryBootDisks[].diskImage: the resource ID of an existing image.
  for (const auto& d : cfg.value("secondaryBootDisks", json::array())) {
    static const std::regex kImage("^(projects/[^/]+/)?global/images/[^/]+$");
    const std::string image = d.value("diskImage", "");
    if (!std::regex_match(image, kImage))
      return BadRequest("Invalid secondary_boot_disks.disk_image \"" + image +
                        "\": expected projects/*/global/images/*.");
  }
  // networkConfig.additionalNodeNetworkConfigs[]: a VPC and a subnetwork each.
  for (const auto& n : np.value("networkConfig", json::object()).value("additionalNodeNetworkConfigs", json::array())) {
    if (n.value("network", "").empty() || n.value("subnetwork", "").empty())
      return BadRequest("additional_node_network_configs: network and subnetwork are both required, got " +
                        n.dump() + ".");
  }
  return std::nullopt;
}

}  // namespace tpu::sim
