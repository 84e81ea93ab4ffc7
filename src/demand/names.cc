// Pool names and ownership labels of demand-driven pools.
#include "demand/names.h"

#include <cctype>

namespace tpu::demand {
namespace {

// Lower case; anything outside [a-z0-9-] becomes '-'.
std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(static_cast<unsigned char>(l)) && static_cast<unsigned char>(l) < 128) ? l : '-';
  }
  return out;
}

std::string TrimDashes(std::string s) {
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

}  // namespace

std::string PoolName(const std::string& jobset, const std::string& job_key) {
  // 12 hex digits of the job key (a SHA-1 of namespace/job name) keep Jobs of
  // one JobSet apart; the JobSet's name gets the rest.
  std::string key = Sanitize(job_key).substr(0, 12);
  std::string base = Sanitize(jobset);
  if (base.empty() || !std::isalpha(static_cast<unsigned char>(base[0]))) base = "js-" + base;
  size_t room = kMaxPoolName - 1 - key.size();
  base = TrimDashes(base.substr(0, room));
  if (key.empty()) return base;
  return base + "-" + key;
}

std::string WorkloadPolicyDescription(const std::string& pool) {
  return "tpu-provisioner-demand owner=workload pool=" + pool;
}

bool IsWorkloadPolicyDescription(const std::string& description) {
  return description.rfind("tpu-provisioner-demand owner=workload pool=", 0) == 0;
}

std::optional<PoolOwner> WorkloadOwner(const cloud::NodePool& pool) {
  if (!pool.resource_labels) return std::nullopt;
  const auto& l = *pool.resource_labels;
  auto get = [&](const char* k) {
    auto it = l.find(k);
    return it == l.end() ? std::string() : it->second;
  };
  if (get(kOwnerLabel) != kOwnerWorkload) return std::nullopt;
  return PoolOwner{get(kPoolNamespaceLabel), get(kPoolJobSetLabel), get(kPoolJobKeyLabel)};
}

}  // namespace tpu::demand
