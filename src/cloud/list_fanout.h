// Reads many paged list calls at once with no thread of its own: the refresh's
// way onto the HTTP event loop (docs/architecture.md, "Reading live state").
// Every list's first page is submitted at once (HttpTransport::Submit, up to
// `max_in_flight`); the loop's callback only hands the answer to a queue, and
// the calling thread drains it: it finishes each call there (counting it,
// mapping errors and parsing the body, so the loop thread only drives
// transfers), submits the next page, and waits out a retryable failure's
// backoff as a timer before reading that list again from its first page.
//
// With a transport whose Submit answers inline (HttpTransport's default,
// which tests' fakes use) the same code reads the lists one call at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "cloud/api_caller.h"
#include "cloud/api_error.h"
#include "cloud/operation_poll.h"  // RetrySchedule

namespace tpu::cloud {

// One list, read page by page.
struct PagedList {
  // The call for the page after `page_token` ("" = the first page). Its finish
  // runs on the thread that called ReadLists: it keeps the page's items and
  // yields the next page's token, "" after the last page.
  std::function<Prepared<std::string>(const std::string& page_token)> prepare_page;
  // Forgets the items kept so far: the list is read again from its first page.
  std::function<void()> restart;
  uint64_t jitter_seed = 0;  // seeds the jitter of this list's backoffs
};

struct ListFanoutOptions {
  int max_in_flight = 256;  // calls submitted and not yet answered, at most
  // A list whose call fails with a retryable error (ApiError::retryable) is
  // read again from its first page after retry.Delay, up to `attempts` reads in all.
  int attempts = 5;
  RetrySchedule retry;
  Clock* clock = &Env::Default();  // the backoff's time; slept on when nothing else is in flight
};

// Why the reading stopped: the first list of `lists` that failed for good.
struct ListFailure {
  size_t list = 0;
  ApiError error;
};

// Reads every list to its last page; nullopt when all were read. On a
// failure, the lists after the failing one may be left part-read (the caller
// reports only the first failure), those before it are read to the end, so
// the failure is the one a reading of the lists in turn would have met first.
// Returns once every call it submitted has been answered and finished.
std::optional<ListFailure> ReadLists(std::vector<PagedList>& lists, const ListFanoutOptions& options);

}  // namespace tpu::cloud
