// Normal forms of GKE and Compute spellings, for the diff.
#include "plan/normalize.h"

#include <algorithm>
#include <cctype>

#include "catalog/catalog.h"

namespace tpu::plan {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string GkeTaintEffect(std::string_view effect) {
  if (effect == "NoSchedule") return "NO_SCHEDULE";
  if (effect == "PreferNoSchedule") return "PREFER_NO_SCHEDULE";
  if (effect == "NoExecute") return "NO_EXECUTE";
  return std::string(effect);
}

bool IsSystemTaint(const cloud::NodeTaint& taint) {
  return taint.key == "google.com/tpu" || taint.key == "cloud.google.com/gke-spot" ||
         taint.key == "cloud.google.com/gke-flex-start";
}

std::vector<cloud::NodeTaint> NormalTaints(const std::vector<cloud::NodeTaint>& taints) {
  std::vector<cloud::NodeTaint> out;
  for (auto t : taints) {
    if (IsSystemTaint(t)) continue;
    t.effect = GkeTaintEffect(t.effect);
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.key, a.value, a.effect) < std::tie(b.key, b.value, b.effect);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool IsSystemNodeLabel(std::string_view key) {
  return StartsWith(key, "cloud.google.com/") || StartsWith(key, "google.com/") ||
         StartsWith(key, "kubernetes.io/") || StartsWith(key, "node.kubernetes.io/");
}

bool IsSystemResourceLabel(std::string_view key) { return StartsWith(key, "goog-"); }

std::string ShortScope(std::string_view scope) {
  constexpr std::string_view kPrefix = "https://www.googleapis.com/auth/";
  if (StartsWith(scope, kPrefix)) scope.remove_prefix(kPrefix.size());
  return std::string(scope);
}

std::vector<std::string> SortedSet(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::vector<std::string> NormalScopes(const std::vector<std::string>& scopes) {
  std::vector<std::string> out;
  for (const auto& s : scopes) out.push_back(ShortScope(s));
  return SortedSet(std::move(out));
}

std::string ResourcePath(std::string_view url) {
  size_t at = url.find("projects/");
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(at));
}

std::string LastSegment(std::string_view url) {
  size_t at = url.rfind('/');
  return std::string(at == std::string_view::npos ? url : url.substr(at + 1));
}

std::string RegionOfZone(std::string_view zone) {
  size_t at = zone.rfind('-');
  // A zone is "<region>-<letter>"; anything else is already a region.
  if (at == std::string_view::npos || zone.size() - at != 2) return std::string(zone);
  return std::string(zone.substr(0, at));
}

std::string ReservationName(std::string_view value, std::string_view project) {
  std::string own = "projects/" + std::string(project) + "/reservations/";
  std::string path = ResourcePath(value);
  if (StartsWith(path, own)) return path.substr(own.size());
  return path;
}

bool VersionMatches(std::string_view desired, std::string_view live) {
  if (desired == live || desired == "latest" || desired == "-") return true;
  if (!StartsWith(live, desired)) return false;
  char next = live[desired.size()];
  return next == '.' || next == '-';
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

int PoolChips(std::string_view machine_type, int node_count) {
  return catalog::ChipsPerVm(machine_type) * node_count;
}

}  // namespace tpu::plan
