// ListFanout: many paged lists over one event loop, answered on the calling thread.
#include "cloud/list_fanout.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <utility>

namespace tpu::cloud {
namespace {

// Where the loop's callbacks leave answers. Shared with them, so a callback
// that runs after ReadLists returned would still find it alive (none does:
// ReadLists waits for every answer, but the loop is not ours to reason about).
struct FanoutInbox {
  std::mutex mu;
  std::condition_variable answered;
  std::vector<std::pair<size_t, Result<http::HttpResponse>>> answers;  // guarded by mu
};

class ListFanout {
 public:
  ListFanout(std::vector<PagedList>& lists, const ListFanoutOptions& options)
      : lists_(lists), options_(options), reads_(lists.size()) {
    for (size_t i = 0; i < lists.size(); ++i) reads_[i].rng.seed(lists[i].jitter_seed);
  }

  std::optional<ListFailure> Run() {
    for (size_t i = 0; i < lists_.size(); ++i) waiting_.emplace_back(i, "");
    SubmitWaiting();
    while (in_flight_ > 0 || !retries_.empty()) {
      std::vector<std::pair<size_t, Result<http::HttpResponse>>> answers;
      {
        std::unique_lock<std::mutex> lock(inbox_->mu);
        auto any = [&] { return !inbox_->answers.empty(); };
        if (in_flight_ > 0 && !any()) {
          // A condition variable cannot be woken by a fake clock: wait for an
          // answer, or in real time until the next backoff is due.
          if (retries_.empty()) {
            inbox_->answered.wait(lock, any);
          } else if (auto wait = NextRetryDue() - options_.clock->Now(); wait > wait.zero()) {
            inbox_->answered.wait_for(lock, wait, any);
          }
        }
        answers.swap(inbox_->answers);
      }
      if (answers.empty() && in_flight_ == 0) {
        // Only backoffs left, and nothing can arrive meanwhile: sleep on the
        // clock (a test's fake one moves on at once).
        if (auto wait = NextRetryDue() - options_.clock->Now(); wait > wait.zero()) options_.clock->SleepFor(wait);
      }
      for (auto& [list, response] : answers) {
        --in_flight_;
        Finish(list, std::move(response));
      }
      StartDueRetries();
      SubmitWaiting();
    }
    return failure_;
  }

 private:
  struct ListRead {
    std::function<ApiResult<std::string>(Result<http::HttpResponse>)> finish;  // of the page in flight
    int attempt = 0;  // failed reads of the whole list so far
    std::mt19937_64 rng;
  };
  struct Retry {
    SteadyTime due;
    size_t list;
  };

  // A list after the first failure is not needed: its result is never used.
  bool Cut(size_t list) const { return failure_ && list > failure_->list; }

  // Submits waiting pages while there is room in flight. Never holds the
  // inbox's lock: a transport's Submit may call back inline.
  void SubmitWaiting() {
    const int max_in_flight = std::max(options_.max_in_flight, 1);
    while (in_flight_ < max_in_flight && !waiting_.empty()) {
      auto [list, page_token] = std::move(waiting_.front());
      waiting_.pop_front();
      if (Cut(list)) continue;
      auto call = lists_[list].prepare_page(page_token);
      if (!call.ok()) {  // no token: fails (or is retried) as a call would
        Handle(list, call.error());
        continue;
      }
      reads_[list].finish = std::move(call->finish);
      ++in_flight_;
      call->transport->Submit(std::move(call->request), [inbox = inbox_, list](Result<http::HttpResponse> r) {
        std::lock_guard<std::mutex> lock(inbox->mu);
        inbox->answers.emplace_back(list, std::move(r));
        inbox->answered.notify_one();
      });
    }
  }

  // On the calling thread: counts the call, maps its errors, parses its body.
  void Finish(size_t list, Result<http::HttpResponse> response) {
    auto finish = std::move(reads_[list].finish);
    ApiResult<std::string> next = finish(std::move(response));
    if (!Cut(list)) Handle(list, std::move(next));
  }

  void Handle(size_t list, ApiResult<std::string> next) {
    if (next.ok()) {
      if (!next->empty()) waiting_.emplace_back(list, std::move(*next));
      return;
    }
    ListRead& read = reads_[list];
    if (next.error().retryable() && read.attempt + 1 < options_.attempts) {
      auto delay = options_.retry.Delay(next.error(), read.attempt, read.rng());
      ++read.attempt;
      lists_[list].restart();
      retries_.push_back({options_.clock->Now() + delay, list});
      return;
    }
    if (!failure_ || list < failure_->list) {
      failure_ = ListFailure{list, next.error()};
      std::erase_if(retries_, [&](const Retry& r) { return Cut(r.list); });
    }
  }

  SteadyTime NextRetryDue() const {
    return std::min_element(retries_.begin(), retries_.end(),
                            [](const Retry& a, const Retry& b) { return a.due < b.due; })
        ->due;
  }

  void StartDueRetries() {
    if (retries_.empty()) return;
    const SteadyTime now = options_.clock->Now();
    for (const Retry& r : retries_)
      if (r.due <= now) waiting_.emplace_back(r.list, "");
    std::erase_if(retries_, [&](const Retry& r) { return r.due <= now; });
  }

  std::vector<PagedList>& lists_;
  const ListFanoutOptions& options_;
  std::vector<ListRead> reads_;                              // by list
  std::shared_ptr<FanoutInbox> inbox_ = std::make_shared<FanoutInbox>();
  std::deque<std::pair<size_t, std::string>> waiting_;       // pages to submit: list, page token
  std::vector<Retry> retries_;                               // lists waiting out a backoff
  int in_flight_ = 0;                                        // submitted, not yet finished
  std::optional<ListFailure> failure_;                       // the first list that failed for good
};

}  // namespace

std::optional<ListFailure> ReadLists(std::vector<PagedList>& lists, const ListFanoutOptions& options) {
  return ListFanout(lists, options).Run();
}

}  // namespace tpu::cloud
