// OperationWatch: the apply's polls of running operations, answered in
// batches — one list call per project instead of one GET per operation
// (docs/architecture.md, "Polling operations").
//
// Poll(op, done) asks for an operation's current state. `done` gets it, on
// the transport's loop thread, from the first call sent after the poll was
// asked that can say:
//  - a list of the project's operations: GKE's locations/-/operations (done
//    or not, so it answers every GKE poll), Compute's aggregated/operations
//    with `status != DONE`, or one zone's list when every Compute operation
//    asked for is in that zone;
//  - a GET of the operation itself: when only one of a project's operations
//    is asked for at once, or two while no more than two are running (a
//    list would cost as many calls and carry more), or when the list does
//    not have it (Compute's filtered list
//    leaves out what is DONE; a second page; an operation already
//    garbage-collected, whose 404 the GET then reports).
// A poll goes out with the others of its project and API when the first of
// them has waited its `slack` (the poller's owner gives the time until its
// operation's next poll, plus a fraction of its expected time); a list
// answers every waiting poll whose operation it shows done, and keeps the
// rest waiting for their own time. While that project's calls are in flight
// new polls wait for them to come back: one batch per project at a time, so
// the list rate follows the operations' times and the API's latency rather
// than the number of operations.
//
// A list that fails with a retryable error (429, 5xx, a dropped connection)
// answers each of its polls with that error, which the poller's owner backs
// off from as from a failed GET; one refused for good (403, 400) is not the
// operations' failure: each of its polls is read with a GET instead. Requests are prepared
// (token, headers) on the thread calling Poll, never on the loop thread,
// which may not wait for a token; a project's list is prepared again after a
// minute, well inside an access token's hour.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cloud/api_caller.h"
#include "cloud/operation_poll.h"
#include "cloud/types.h"
#include "http/transport.h"

namespace tpu::cloud {

class OperationWatch {
 public:
  struct Options {
    // How long a poll may wait for others of its project to go out with it,
    // when its caller does not say.
    std::chrono::milliseconds window{20};
    // Polls of one project sent together from which one list replaces their GETs.
    int list_from = 3;
  };
  // Calls are sent through the clients' transport; `loop` runs the batching
  // timers (the same event loop, http::HttpTransport::RunAfter). All must
  // outlive the watch. Over a transport with no event loop every poll goes
  // out at once, as a GET of its own unless others are waiting with it.
  OperationWatch(OperationPoller* poller, GkeClient* gke, ComputeClient* compute, http::HttpTransport* loop,
                 Options options);
  OperationWatch(OperationPoller* poller, GkeClient* gke, ComputeClient* compute, http::HttpTransport* loop)
      : OperationWatch(poller, gke, compute, loop, Options{}) {}

  using Done = std::function<void(ApiResult<Operation>)>;
  // `slack`: how long this poll may wait, for others of its project to go
  // out with it or for its operation's next poll time. It is answered at
  // the latest then, and sooner if a list sent meanwhile for other polls of
  // its project shows its operation done.
  void Poll(const Operation& op, std::chrono::milliseconds slack, Done done);
  // The same, for a poll of an operation that is not due for `wait` yet: it
  // is answered before then only if a list shows its operation done, and
  // from then on as Poll(op, slack) would be.
  void PollAfter(const Operation& op, std::chrono::milliseconds wait, std::chrono::milliseconds slack, Done done);
  // Every poll waiting is answered as soon as its call comes back (an apply
  // being cancelled stops waiting for operation times).
  void AnswerAllNow();
  void Poll(const Operation& op, Done done) { Poll(op, options_.window, std::move(done)); }

  // Calls made so far, for tests and the apply's summary.
  struct Counts {
    int64_t lists = 0;
    int64_t gets = 0;
    int64_t polls = 0;
  };
  Counts counts() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Waiter {
    Operation op;
    PreparedCall<Operation> get;
    Done done;
    Clock::time_point deadline;  // answered by then at the latest; sooner if a list shows it done
    // From then on a call that goes out takes it along and answers it
    // whatever it says (before, only if its operation is done).
    Clock::time_point ripe;
  };
  // A list call kept ready to send, and when it was prepared (its token is
  // used for kPreparedFor at most; access tokens live an hour).
  struct ListCall {
    PreparedCall<std::vector<Operation>> call;
    std::chrono::steady_clock::time_point prepared;
  };
  static constexpr std::chrono::seconds kPreparedFor{60};
  struct Batch {
    std::vector<Waiter> pending;
    std::optional<Clock::time_point> armed_for;  // the flush timer set last
    int in_flight = 0;                           // calls of this batch not back yet
    // Operations of the project last seen running, by name: with enough of
    // them in flight, two polls go out as one list rather than two GETs.
    std::set<std::string> running;
    // Prepared by the latest Poll: the project's list, and each scope's.
    std::optional<ListCall> list;
    std::map<std::string, ListCall> scope_lists;  // Compute: "zones/Z" → its list
  };

  // Runs on the loop: sends what `key`'s batch has waiting.
  void Flush(const std::string& key);
  // REQUIRES: mu_ held. The earliest deadline of `batch`'s pending polls.
  static std::optional<Clock::time_point> DueLocked(const Batch& batch);
  // REQUIRES: mu_ held. When `batch` has polls waiting, nothing out, and no
  // timer set for their due time: how long until then. The caller then calls
  // Arm, after releasing mu_.
  std::optional<std::chrono::milliseconds> ArmLocked(Batch& batch, Clock::time_point now);
  void Arm(const std::string& key, std::chrono::milliseconds delay);
  // REQUIRES: mu_ held. The pending polls due by `now`, taken out.
  std::vector<Waiter> TakeDueLocked(Batch& batch, Clock::time_point now);
  // REQUIRES: mu_ held. The list that answers all of `batch`'s pending
  // polls (one zone's when they are all in it), if it is prepared.
  std::optional<PreparedCall<std::vector<Operation>>> ListForLocked(const Batch& batch) const;
  void SendGets(const std::string& key, std::vector<Waiter> waiters);
  void SendList(const std::string& key, PreparedCall<std::vector<Operation>> list, std::vector<Waiter> waiters);
  // Hands `w` its answer, noting whether its operation still runs.
  void Answer(const std::string& key, Waiter& w, ApiResult<Operation> result);
  // One call of `key`'s batch is back.
  void Returned(const std::string& key);

  OperationPoller* poller_;
  GkeClient* gke_;
  ComputeClient* compute_;
  http::HttpTransport* loop_;
  Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Batch> batches_;  // "gke P" / "compute P"; guarded by mu_
  Counts counts_;                         // guarded by mu_
};

}  // namespace tpu::cloud
