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

std::string CompatPoolName(const std::string& jobset, const std::string& job_key) {
  return jobset.substr(0, kCompatJobSetPrefix) + "-" + job_key.substr(0, kCompatJobKeySuffix);
}

std::string WorkloadPolicyDescription(const std::string& pool) {
  return "tpu-provisioner-demand owner=workload pool=" + pool;
}

bool IsWorkloadPolicyDescription(const std::string& description) {
  return description.rfind("tpu-provisioner-demand owner=workload pool=", 0) == 0;
}

namespace {

std::string Get(const std::optional<cloud::StringMap>& m, const char* k) {
  if (!m) return "";
  auto it = m->find(k);
  return it == m->end() ? std::string() : it->second;
}

}  // namespace

std::optional<PoolOwner> WorkloadOwner(const cloud::NodePool& pool) {
  if (Get(pool.resource_labels, kOwnerLabel) == kOwnerWorkload) {
    PoolOwner o;
    o.ns = Get(pool.resource_labels, kPoolNamespaceLabel);
    o.jobset = Get(pool.resource_labels, kPoolJobSetLabel);
    o.job_key = Get(pool.resource_labels, kPoolJobKeyLabel);
    o.jobset_uid = Get(pool.resource_labels, kPoolJobSetUidLabel);
    o.spec = Get(pool.resource_labels, kPoolSpecLabel);
    return o;
  }
  if (Get(pool.labels, kCompatManagerLabel) != kCompatManagerValue) return std::nullopt;
  PoolOwner o;
  o.adopted = true;
  o.jobset = Get(pool.labels, kCompatJobSetLabel);
  if (o.jobset.empty()) o.jobset = Get(pool.labels, kCompatNodepoolIdLabel);
  if (o.jobset.empty()) return std::nullopt;  // no JobSet to follow: never ours to delete
  o.ns = Get(pool.labels, kCompatNamespaceLabel);
  if (o.ns.empty()) o.ns = "default";
  return o;
}

}  // namespace tpu::demand
