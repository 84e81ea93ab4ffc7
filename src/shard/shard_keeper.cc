// ShardKeeper: see shard_keeper.h.
#include "shard/shard_keeper.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "kube/lease.h"
#include "kube/resource.h"
#include "kube/status_errors.h"
#include "shard/shard_map.h"

namespace tpu::shard {
namespace {

namespace res = kube::resources;
using kube::json;

std::string NameOf(const json& lease) { return lease["metadata"].value("name", ""); }

}  // namespace

ShardKeeper::ShardKeeper(kube::KubeClient& client, const Clock& clock, ShardConfig config)
    : client_(client), clock_(clock), config_(std::move(config)) {}

// A Lease of the set written by us (kube/lease.h), labelled as the set's and
// marked with our shard count.
Result<json> ShardKeeper::Write(const std::string& name, const json* current, const std::string& holder,
                                bool transition) {
  json lease = kube::LeaseObject(config_.ns, name, holder, config_.lease_duration, clock_.WallNow(), current,
                                 transition);
  lease["metadata"]["labels"] = {{kShardSetLabel, config_.base}};
  lease["metadata"]["annotations"] = {{kShardCountAnnotation, std::to_string(config_.shards)}};
  return current ? client_.Update(res::kLeases, config_.ns, lease) : client_.Create(res::kLeases, config_.ns, lease);
}

// From the list just read, so a round costs no extra read.
Status ShardKeeper::RenewMembership(const Leases& leases) {
  auto it = leases.find(MemberLeaseName(config_.base, config_.identity));
  const json* current = it == leases.end() ? nullptr : &it->second;
  auto written = Write(MemberLeaseName(config_.base, config_.identity), current, config_.identity, !current);
  return written.ok() || kube::IsConflict(written.status()) || kube::IsAlreadyExists(written.status())
             ? Status::OK()
             : written.status();
}

void ShardKeeper::Observe(const Leases& leases, SteadyTime now) {
  for (const auto& [name, lease] : leases) {
    std::string record = kube::LeaseRecord(lease);
    auto it = seen_.find(name);
    if (it == seen_.end() || it->second.record != record) seen_[name] = {record, now};
  }
}

bool ShardKeeper::Expired(const std::string& name, const json& lease, SteadyTime now) const {
  if (kube::LeaseHolder(lease).empty()) return true;
  auto it = seen_.find(name);
  if (it == seen_.end()) return false;
  return now >= it->second.since + kube::LeaseDuration(lease);
}

std::vector<const json*> ShardKeeper::LiveMembers(const Leases& leases, SteadyTime now) const {
  const std::string prefix = MemberLeaseName(config_.base, "");
  std::vector<const json*> live;
  for (const auto& [name, lease] : leases)
    if (name.rfind(prefix, 0) == 0 && !Expired(name, lease, now)) live.push_back(&lease);
  return live;
}

int ShardKeeper::CountLive(const std::vector<const json*>& members) const {
  for (const json* m : members)
    if (kube::LeaseHolder(*m) == config_.identity) return static_cast<int>(members.size());
  return static_cast<int>(members.size()) + 1;  // we are live even when our own record looks stale
}

Status ShardKeeper::CheckShardCount(const std::vector<const json*>& members) const {
  const std::string mine = std::to_string(config_.shards);
  for (const json* lease : members) {
    const std::string theirs =
        (*lease)["metadata"].value("annotations", json::object()).value(kShardCountAnnotation, mine);
    if (theirs != mine)
      return Status::FailedPrecondition("replica " + kube::LeaseHolder(*lease) + " uses " + theirs +
                                        " shards, this one " + mine +
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
    const bool ours = it != leases.end() && kube::LeaseHolder(it->second) == config_.identity;
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
    if (it != leases.end() && kube::LeaseHolder(it->second) == config_.identity) (void)Write(name, &it->second, "", false);
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
    const std::string previous = current ? kube::LeaseHolder(*current) : "";
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
  kube::ListOptions lo;
  lo.label_selector = std::string(kShardSetLabel) + "=" + config_.base;
  auto list = client_.List(kube::resources::kLeases, config_.ns, lo);
  Leases leases;  // as read, then as we wrote them
  if (list.ok()) {
    for (auto& item : list->items) {
      std::string name = NameOf(item);  // before the move: json's operator= takes its argument first
      leases[name] = std::move(item);
    }
  }
  Status status = list.ok() ? RenewMembership(leases) : list.status();
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.errors;
    counts_.last_error = status.ToString();
    return status;
  }
  Observe(leases, now);
  const std::vector<const json*> members = LiveMembers(leases, now);
  if (Status s = CheckShardCount(members); !s.ok()) {
    // Hold nothing: the shards' Leases lapse, and nobody acts until the counts agree.
    std::lock_guard<std::mutex> lock(mu_);
    if (!held_.empty()) spdlog::error("shards: {} drops its {} shards: {}", config_.identity, held_.size(), s.ToString());
    held_.clear();
    ++counts_.errors;
    counts_.last_error = s.ToString();
    return s;
  }
  const int live = CountLive(members);
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
    if (!current.ok() || kube::LeaseHolder(*current) != config_.identity) continue;
    auto r = Write(name, &*current, "", false);
    if (!r.ok() && first.ok()) first = r.status();
  }
  Status gone = client_.Delete(kube::resources::kLeases, config_.ns, MemberLeaseName(config_.base, config_.identity));
  if (!gone.ok() && !kube::IsNotFound(gone) && first.ok()) first = gone;
  return first;
}

}  // namespace tpu::shard
