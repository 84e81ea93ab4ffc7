// Spellings and server defaults the diff must see through, so a pool that is in
// sync never flaps (docs/architecture.md, "Plan rules"): taint effects (NoSchedule ≡ NO_SCHEDULE),
// OAuth scopes (short ≡ https://www.googleapis.com/auth/…), resource URLs
// (full ≡ projects/…), GKE's default disk, labels and taints GKE adds itself,
// and version prefixes ("1.30" matches "1.30.5-gke.1014001").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cloud/types.h"

namespace tpu::plan {

// What GKE reports when a create body says nothing.
inline constexpr const char* kDefaultDiskType = "pd-balanced";
inline constexpr int kDefaultDiskSizeGb = 100;
inline constexpr const char* kReservationKey = "compute.googleapis.com/reservation-name";

// "NoSchedule" | "NO_SCHEDULE" → "NO_SCHEDULE" (and the other two effects).
std::string GkeTaintEffect(std::string_view effect);
// Taints with GKE effects, GKE-added taints dropped, sorted.
std::vector<cloud::NodeTaint> NormalTaints(const std::vector<cloud::NodeTaint>& taints);
// Taints GKE adds on its own (TPU, spot): never compared.
bool IsSystemTaint(const cloud::NodeTaint& taint);
// Node labels GKE sets (cloud.google.com/…, google.com/…, kubernetes.io/…).
bool IsSystemNodeLabel(std::string_view key);
// Resource labels GKE sets (goog-…).
bool IsSystemResourceLabel(std::string_view key);
// "https://www.googleapis.com/auth/cloud-platform" → "cloud-platform".
std::string ShortScope(std::string_view scope);
// Scopes shortened, sorted, unique.
std::vector<std::string> NormalScopes(const std::vector<std::string>& scopes);
// Sorted, unique.
std::vector<std::string> SortedSet(std::vector<std::string> v);
// "https://www.googleapis.com/compute/v1/projects/p/global/x/y" → "projects/p/global/x/y";
// strings without "projects/" unchanged.
std::string ResourcePath(std::string_view url);
// The last '/'-separated segment.
std::string LastSegment(std::string_view url);
// "us-central2-b" → "us-central2".
std::string RegionOfZone(std::string_view zone);
// Reservation names relative to `project`: "projects/<project>/reservations/r" → "r".
std::string ReservationName(std::string_view value, std::string_view project);
// "1.30" matches "1.30", "1.30.5", "1.30.5-gke.100"; "latest"/"-" match anything.
bool VersionMatches(std::string_view desired, std::string_view live);
// Case-insensitive equality (image types: COS_CONTAINERD ≡ cos_containerd).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// Chips in a pool of `node_count` VMs of `machine_type` (0 for non-TPU types).
int PoolChips(std::string_view machine_type, int node_count);

}  // namespace tpu::plan
