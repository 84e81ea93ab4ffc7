// ShardKeeper: see shard_keeper.h.
#include "shard/shard_keeper.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "kube/resource.h"
#include "kube/status_errors.h"
#include "kube/timestamps.h"
#include "shard/shard_map.h"

namespace tpu::shard {
namespace {

namespace res = kube::resources;
using kube::json;

std::string NameOf(const json& lease) { return lease["metadata"].value("name", ""); }
std::string HolderOf(const json& lease) { return lease.value("spec", json::object()).value("holderIdentity", ""); }

}  // namespace

ShardKeeper::ShardKeeper(kube::KubeClient& client, const Clock& clock, ShardConfig config)
    : client_(client), clock_(clock), config_(std::move(config)) {}

// A Lease of the set written by us: held by `holder` ("" gives it back),
// renewed now, with the read resourceVersion so a concurrent writer conflicts.
Result<json> ShardKeeper::Write(const std::string& name, const json* current, const std::string& holder,
                                bool transition) {
  const std::string now = kube::FormatMicroTime(clock_.WallNow());
  json spec = {{"holderIdentity", holder},
               {"leaseDurationSeconds", config_.lease_duration.count()},
               {"renewTime", now}};
  const json cur = current ? current->value("spec", json::object()) : json::object();
  spec["acquireTime"] = transition ? now : cur.value("acquireTime", now);
  spec["leaseTransitions"] = cur.value("leaseTransitions", 0) + (transition && current ? 1 : 0);
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata",
                 {{"name", name},
                  {"namespace", config_.ns},
                  {"labels", {{kShardSetLabel, config_.base}}},
                  {"annotations", {{kShardCountAnnotation, std::to_string(config_.shards)}}}}},
                {"spec", spec}};
  if (!current) return client_.Create(res::kLeases, config_.ns, lease);
  lease["metadata"]["resourceVersion"] = (*current)["metadata"]["resourceVersion"];
  return client_.Update(res::kLeases, config_.ns, lease);
}

Status ShardKeeper::RenewMembership() {
  const std::string name = MemberLeaseName(config_.base, config_.identity);
  auto current = client_.Get(res::kLeases, config_.ns, name);
  if (!current.ok() && !kube::IsNotFound(current.status())) return current.status();
  auto written = Write(name, current.ok() ? &*current : nullptr, config_.identity, !current.ok());
  return written.ok() || kube::IsConflict(written.status()) || kube::IsAlreadyExists(written.status())
             ? Status::OK()
             : written.status();
}

void ShardKeeper::Observe(const Leases& leases, SteadyTime now) {
  for (const auto& [name, lease] : leases) {
    std::string record = HolderOf(lease) + "|" + lease.value("spec", json::object()).value("renewTime", "");
    auto it = seen_.find(name);
    if (it == seen_.end() || it->second.record != record) seen_[name] = {record, now};
  }
}

bool ShardKeeper::Expired(const std::string& name, const json& lease, SteadyTime now) const {
  if (HolderOf(lease).empty()) return true;
  auto it = seen_.find(name);
  if (it == seen_.end()) return false;
  auto duration = std::chrono::seconds(lease["spec"].value("leaseDurationSeconds", 15));
  return now >= it->second.since + duration;
}

int ShardKeeper::CountLive(const Leases& leases, SteadyTime now) const {
  const std::string prefix = MemberLeaseName(config_.base, "");
  int live = 0;
  bool self = false;
  for (const auto& [name, lease] : leases) {
    if (name.rfind(prefix, 0) != 0 || Expired(name, lease, now)) continue;
    ++live;
    if (HolderOf(lease) == config_.identity) self = true;
  }
  return self ? live : live + 1;  // we are live even when our own renew failed just now
}

Status ShardKeeper::CheckShardCount(const Leases& leases, SteadyTime now) const {
  const std::string prefix = MemberLeaseName(config_.base, "");
  const std::string mine = std::to_string(config_.shards);
  for (const auto& [name, lease] : leases) {
    if (name.rfind(prefix, 0) != 0 || Expired(name, lease, now)) continue;
    const std::string theirs =
        lease["metadata"].value("annotations", json::object()).value(kShardCountAnnotation, mine);
    if (theirs != mine)
      return Status::FailedPrecondition("replica " + HolderOf(lease) + " uses " + theirs + " shards, this one " + mine +
                                        ": every replica of a shard set needs the same --shards");
  }
  return Status::OK();
}

int ShardKeeper::HeldCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(held_.size());
}

void ShardKeeper::RenewHeld(Leases& leases, SteadyTime now) {
  std::vector<int> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [shard, at] : held_) held.push_back(shard);
  }
  for (int shard : held) {
    const std::string name = ShardLeaseName(config_.base, shard);
    auto it = leases.find(name);
    const bool ours = it != leases.end() && HolderOf(it->second) == config_.identity;
    Result<json> renewed = ours ? Write(name, &it->second, config_.identity, false)
                                : Result<json>(Status::FailedPrecondition(name + " is held by another replica"));
    if (renewed.ok()) it->second = *renewed;  // its new resourceVersion, for a release this round
    std::lock_guard<std::mutex> lock(mu_);
    if (renewed.ok()) {
      held_[shard] = now;
    } else if (!ours || kube::IsConflict(renewed.status())) {
      held_.erase(shard);  // another replica has it: stop at once
      ++counts_.lost;
      spdlog::warn("shards: {} lost shard {}", config_.identity, shard);
    }
    // Any other error: the shard lapses at its renew deadline unless a later renew succeeds.
  }
}

void ShardKeeper::ReleaseSurplus(const Leases& leases, int fair) {
  while (HeldCount() > fair) {
    int shard;
    {
      // Stop holding before giving back, so no call of ours can follow the release.
      std::lock_guard<std::mutex> lock(mu_);
      shard = held_.rbegin()->first;
      held_.erase(shard);
      ++counts_.released;
    }
    const std::string name = ShardLeaseName(config_.base, shard);
    auto it = leases.find(name);
    // A failed release is harmless: the Lease expires, and we no longer act on it.
    if (it != leases.end() && HolderOf(it->second) == config_.identity) (void)Write(name, &it->second, "", false);
    spdlog::info("shards: {} released shard {} (fair share {})", config_.identity, shard, fair);
  }
}

void ShardKeeper::AcquireUpTo(const Leases& leases, int fair, SteadyTime now) {
  const int n = config_.shards;
  const int start = ShardOf(config_.identity, n);  // replicas start their search at different shards
  for (int k = 0; k < n && HeldCount() < fair; ++k) {
    const int shard = (start + k) % n;
    if (Holds(shard)) continue;
    const std::string name = ShardLeaseName(config_.base, shard);
    auto it = leases.find(name);
    const json* current = it == leases.end() ? nullptr : &it->second;
    const std::string previous = current ? HolderOf(*current) : "";
    if (current && previous != config_.identity && !Expired(name, *current, now)) continue;
    auto taken = Write(name, current, config_.identity, previous != config_.identity);
    if (!taken.ok()) continue;  // another replica was faster (409), or an error: next round
    std::lock_guard<std::mutex> lock(mu_);
    held_[shard] = now;
    ++counts_.acquired;
    const bool takeover = !previous.empty() && previous != config_.identity;
    if (takeover) ++counts_.takeovers;
    spdlog::info("shards: {} acquired shard {}{}", config_.identity, shard,
                 takeover ? " (taken over from " + previous + ", whose lease expired)" : "");
  }
}

Status ShardKeeper::Tick() {
  const SteadyTime now = clock_.Now();
  Status status = RenewMembership();
  kube::ListOptions lo;
  lo.label_selector = std::string(kShardSetLabel) + "=" + config_.base;
  auto list = status.ok() ? client_.List(kube::resources::kLeases, config_.ns, lo) : Result<kube::ObjectList>(status);
  if (!list.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.errors;
    counts_.last_error = list.status().ToString();
    return list.status();
  }
  Leases leases;  // as read, then as we wrote them
  for (auto& item : list->items) {
    std::string name = NameOf(item);  // before the move: json's operator= takes its argument first
    leases[name] = std::move(item);
  }
  Observe(leases, now);
  if (Status s = CheckShardCount(leases, now); !s.ok()) {
    // Hold nothing: the shards' Leases lapse, and nobody acts until the counts agree.
    std::lock_guard<std::mutex> lock(mu_);
    if (!held_.empty()) spdlog::error("shards: {} drops its {} shards: {}", config_.identity, held_.size(), s.ToString());
    held_.clear();
    ++counts_.errors;
    counts_.last_error = s.ToString();
    return s;
  }
  const int live = CountLive(leases, now);
  const int fair = FairShare(config_.shards, live);
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.live_replicas = live;
    counts_.fair_share = fair;
    counts_.last_error.clear();
  }
  RenewHeld(leases, now);
  ReleaseSurplus(leases, fair);
  if (rounds_++ >= config_.join_rounds) AcquireUpTo(leases, fair, now);
  return Status::OK();
}

bool ShardKeeper::Holds(int shard) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(shard);
  return it != held_.end() && clock_.Now() < it->second + config_.renew_deadline;
}

bool ShardKeeper::OwnsTarget(const std::string& target_key) const {
  return Holds(ShardOf(target_key, config_.shards));
}

ShardSnapshot ShardKeeper::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  ShardSnapshot s = counts_;
  const SteadyTime now = clock_.Now();
  for (const auto& [shard, at] : held_)
    if (now < at + config_.renew_deadline) s.held.push_back(shard);
  return s;
}

Status ShardKeeper::ReleaseAll() {
  std::vector<int> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [shard, at] : held_) held.push_back(shard);
    held_.clear();
    counts_.released += held.size();
  }
  Status first;
  for (int shard : held) {
    const std::string name = ShardLeaseName(config_.base, shard);
    auto current = client_.Get(kube::resources::kLeases, config_.ns, name);
    if (!current.ok() || HolderOf(*current) != config_.identity) continue;
    auto r = Write(name, &*current, "", false);
    if (!r.ok() && first.ok()) first = r.status();
  }
  Status gone = client_.Delete(kube::resources::kLeases, config_.ns, MemberLeaseName(config_.base, config_.identity));
  if (!gone.ok() && !kube::IsNotFound(gone) && first.ok()) first = gone;
  return first;
}

}  // namespace tpu::shard
