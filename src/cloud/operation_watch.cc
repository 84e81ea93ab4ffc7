// OperationWatch: per-project batches of operation polls, sent as one list
// or as GETs, on the event loop's timers.
#include "cloud/operation_watch.h"

#include <set>
#include <unordered_map>

namespace tpu::cloud {
namespace {

std::string BatchKey(const Operation& op) {
  return (op.api == Operation::Api::kGke ? "gke " : "compute ") + op.project;
}

}  // namespace

OperationWatch::OperationWatch(OperationPoller* poller, GkeClient* gke, ComputeClient* compute,
                               http::HttpTransport* loop, Options options)
    : poller_(poller), gke_(gke), compute_(compute), loop_(loop), options_(options) {}

OperationWatch::Counts OperationWatch::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void OperationWatch::Poll(const Operation& op, std::chrono::milliseconds slack, Done done) {
  PollAfter(op, std::chrono::milliseconds(0), slack, std::move(done));
}

void OperationWatch::PollAfter(const Operation& op, std::chrono::milliseconds wait, std::chrono::milliseconds slack,
                               Done done) {
  // With no loop to wait on, a poll goes out at once: nothing can be put off.
  if (!loop_->HasEventLoop()) wait = slack = std::chrono::milliseconds(0);
  // Prepared here, on the caller's thread: a token refresh may block.
  auto get = poller_->PreparePoll(op);
  if (!get.ok()) return done(get.error());
  const std::string key = BatchKey(op);
  const bool gke = op.api == Operation::Api::kGke;
  const std::string scope = gke ? "" : OperationScopePath(op);
  const auto now = std::chrono::steady_clock::now();
  bool stale_list = false, stale_scope = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Batch& b = batches_[key];
    stale_list = !b.list || now - b.list->prepared >= kPreparedFor;
    auto it = b.scope_lists.find(scope);
    stale_scope = !gke && (it == b.scope_lists.end() || now - it->second.prepared >= kPreparedFor);
  }
  // The lists are prepared again only when their token may be getting old.
  std::optional<ListCall> list, scope_list;
  if (stale_list) {
    auto p = gke ? gke_->PrepareListOperations(op.project) : compute_->PrepareListRunningOperations(op.project);
    if (p.ok()) list = ListCall{std::move(*p), now};
  }
  if (stale_scope) {
    auto p = compute_->PrepareListRunningOperations(op.project, scope);
    if (p.ok()) scope_list = ListCall{std::move(*p), now};
  }
  std::optional<std::chrono::milliseconds> arm;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.polls;
    Batch& b = batches_[key];
    const auto due = now + wait + slack;
    b.pending.push_back(Waiter{op, std::move(*get), std::move(done), due, now + wait});
    if (list) b.list = std::move(*list);
    if (scope_list) b.scope_lists.insert_or_assign(scope, std::move(*scope_list));
    arm = ArmLocked(b, now);
  }
  if (arm) Arm(key, *arm);
}

std::optional<OperationWatch::Clock::time_point> OperationWatch::DueLocked(const Batch& b) {
  std::optional<Clock::time_point> due;
  for (const Waiter& w : b.pending)
    if (!due || w.deadline < *due) due = w.deadline;
  return due;
}

std::optional<std::chrono::milliseconds> OperationWatch::ArmLocked(Batch& b, Clock::time_point now) {
  const auto due = DueLocked(b);
  if (b.in_flight > 0 || !due) return std::nullopt;
  if (b.armed_for && *b.armed_for <= *due) return std::nullopt;  // a timer fires by then
  b.armed_for = due;
  return std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(*due - now));
}

std::optional<PreparedCall<std::vector<Operation>>> OperationWatch::ListForLocked(const Batch& b) const {
  std::set<std::string> scopes;
  for (const Waiter& w : b.pending)
    scopes.insert(w.op.api == Operation::Api::kGke ? std::string() : OperationScopePath(w.op));
  auto scoped = scopes.size() == 1 ? b.scope_lists.find(*scopes.begin()) : b.scope_lists.end();
  if (scoped != b.scope_lists.end() && scoped->first.rfind("zones/", 0) == 0) return scoped->second.call;
  if (b.list) return b.list->call;
  return std::nullopt;
}

void OperationWatch::Arm(const std::string& key, std::chrono::milliseconds delay) {
  // Not under mu_: a transport with no loop runs the flush at once.
  loop_->RunAfter(delay, [this, key] { Flush(key); });
}

void OperationWatch::Flush(const std::string& key) {
  std::vector<Waiter> waiters;
  std::optional<PreparedCall<std::vector<Operation>>> list;
  std::optional<std::chrono::milliseconds> rearm;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Batch& b = batches_[key];
    const auto now = Clock::now();
    if (b.armed_for && *b.armed_for <= now) b.armed_for.reset();
    if (b.in_flight > 0 || b.pending.empty()) return;
    if (*DueLocked(b) > now) {
      // A timer set for polls that have gone out since: wait for these ones' time.
      rearm = ArmLocked(b, now);
    } else {
      const int asked = static_cast<int>(b.pending.size());
      const int running = static_cast<int>(b.running.size());
      if (asked >= options_.list_from || (asked == 2 && running >= options_.list_from)) list = ListForLocked(b);
      // One list answers them all, the ones not due yet included; a GET each only those due.
      if (list) waiters.swap(b.pending);
      else waiters = TakeDueLocked(b, now);
      // Counted before anything is sent: an answer may come back on this thread.
      b.in_flight = list ? 1 : static_cast<int>(waiters.size());
    }
  }
  if (rearm) return Arm(key, *rearm);
  if (list) SendList(key, std::move(*list), std::move(waiters));
  else if (!waiters.empty()) SendGets(key, std::move(waiters));
}

void OperationWatch::SendGets(const std::string& key, std::vector<Waiter> waiters) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.gets += static_cast<int64_t>(waiters.size());
  }
  for (Waiter& w : waiters) {
    http::HttpTransport* transport = w.get.transport;
    http::HttpRequest request = std::move(w.get.request);
    auto finish = std::move(w.get.finish);
    transport->Submit(std::move(request), [this, key, finish = std::move(finish),
                                           w = std::move(w)](Result<http::HttpResponse> r) mutable {
      Answer(key, w, finish(std::move(r)));
      Returned(key);
    });
  }
}

void OperationWatch::SendList(const std::string& key, PreparedCall<std::vector<Operation>> list,
                              std::vector<Waiter> waiters) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.lists;
  }
  http::HttpTransport* transport = list.transport;
  transport->Submit(std::move(list.request), [this, key, finish = std::move(list.finish),
                                              waiters = std::move(waiters)](Result<http::HttpResponse> r) mutable {
    ApiResult<std::vector<Operation>> listed = finish(std::move(r));
    const auto now = Clock::now();
    std::vector<Waiter> unlisted, later;
    // A poll not ripe yet is answered now only if its operation is done.
    auto ripe = [&](const Waiter& w) { return w.ripe <= now; };
    if (!listed.ok() && listed.error().retryable()) {
      // The API is busy or failing: each ripe poll backs off as a failed GET would.
      for (Waiter& w : waiters) {
        if (ripe(w)) Answer(key, w, listed.error());
        else later.push_back(std::move(w));
      }
    } else if (!listed.ok()) {
      // Refused for good (a role that may get operations but not list them,
      // a quota on lists): the list's failure is not the operations'.
      for (Waiter& w : waiters) (ripe(w) ? unlisted : later).push_back(std::move(w));
    } else {
      std::unordered_map<std::string, Operation*> by_name;
      for (Operation& op : *listed) by_name.emplace(op.name, &op);
      for (Waiter& w : waiters) {
        auto it = by_name.find(w.op.name);
        if (it == by_name.end() || (w.op.api == Operation::Api::kCompute && it->second->location != w.op.location)) {
          (ripe(w) ? unlisted : later).push_back(std::move(w));
        } else if (!it->second->done() && !ripe(w)) {
          later.push_back(std::move(w));
        } else {
          Answer(key, w, *it->second);
        }
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      Batch& b = batches_[key];
      for (Waiter& w : later) b.pending.push_back(std::move(w));
      b.in_flight += static_cast<int>(unlisted.size());
    }
    if (!unlisted.empty()) SendGets(key, std::move(unlisted));
    Returned(key);
  });
}

std::vector<OperationWatch::Waiter> OperationWatch::TakeDueLocked(Batch& b, Clock::time_point now) {
  std::vector<Waiter> due, rest;
  for (Waiter& w : b.pending) (w.ripe <= now ? due : rest).push_back(std::move(w));
  b.pending.swap(rest);
  return due;
}

void OperationWatch::AnswerAllNow() {
  std::vector<std::string> keys;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    for (auto& [key, b] : batches_) {
      if (b.pending.empty()) continue;
      for (Waiter& w : b.pending) {
        w.deadline = std::min(w.deadline, now);
        w.ripe = std::min(w.ripe, now);
      }
      b.armed_for.reset();
      keys.push_back(key);
    }
  }
  for (const std::string& key : keys) Arm(key, std::chrono::milliseconds(0));
}

void OperationWatch::Answer(const std::string& key, Waiter& w, ApiResult<Operation> result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& running = batches_[key].running;
    if (result.ok() && !result->done()) running.insert(w.op.name);
    else running.erase(w.op.name);
  }
  w.done(std::move(result));
}

void OperationWatch::Returned(const std::string& key) {
  std::optional<std::chrono::milliseconds> arm;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Batch& b = batches_[key];
    --b.in_flight;
    arm = ArmLocked(b, Clock::now());
  }
  if (arm) Arm(key, *arm);
}

}  // namespace tpu::cloud
