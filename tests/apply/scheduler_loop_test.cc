// The scheduler over the event loop (http/curl_multi.h): 200 tasks each with
// a request in flight at once, all held by a loopback server until every one
// has arrived, run on 4 workers — requests wait in the loop, not on threads.
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "apply/scheduler.h"
#include "http/curl_multi.h"
#include "http/test_server.h"

namespace tpu::apply {
namespace {

constexpr int kTasks = 200;
constexpr int kWorkers = 4;

// Records which threads ran its Advance() and its continuation.
struct Threads {
  std::mutex mu;
  std::set<std::thread::id> ids;
  void Note() {
    std::lock_guard<std::mutex> l(mu);
    ids.insert(std::this_thread::get_id());
  }
};

// One GET, then done if the answer was 200.
class CallTask : public Task {
 public:
  CallTask(http::HttpTransport* transport, std::string url, Threads* threads)
      : transport_(transport), url_(std::move(url)), threads_(threads) {}
  Outcome Advance() override {
    threads_->Note();
    http::HttpRequest req;
    req.url = url_;
    return Outcome::Send(transport_, std::move(req), [this](Result<http::HttpResponse> r) {
      threads_->Note();
      if (!r.ok()) return Outcome::Failed(r.status());
      if (r->status != 200) return Outcome::Failed(Status::Internal("status " + std::to_string(r->status)));
      return Outcome::Done();
    });
  }

 private:
  http::HttpTransport* transport_;
  std::string url_;
  Threads* threads_;
};

TEST(SchedulerOnEventLoop, TwoHundredCallsInFlightOnFourWorkers) {
  http::testing::TestServer srv(kTasks + 8);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  srv.server().Get("/op", [&](const httplib::Request&, httplib::Response& res) {
    // Held until every task's request is here: they are all in flight at once.
    // (The bound only keeps a broken run from hanging; the peaks below fail it.)
    std::unique_lock<std::mutex> l(mu);
    ++arrived;
    cv.notify_all();
    cv.wait_for(l, std::chrono::seconds(30), [&] { return arrived >= kTasks; });
    res.set_content("{}", "application/json");
  });
  http::CurlMultiLoop loop({}, /*max_host_connections=*/kTasks + 8);
  Threads threads;
  Scheduler s({.parallelism = kTasks, .threads = kWorkers, .group_limit = 5});
  for (int i = 0; i < kTasks; ++i)
    s.Add({"t" + std::to_string(i), "", {}, "task", ""}, std::make_unique<CallTask>(&loop, srv.url() + "op", &threads));
  auto results = s.Run();
  for (const auto& r : results) EXPECT_EQ(r.state, TaskResult::State::kDone) << r.id << ": " << r.status.ToString();
  EXPECT_EQ(s.peak_calls_in_flight(), kTasks);
  EXPECT_EQ(loop.peak_in_flight(), kTasks);
  EXPECT_LE(threads.ids.size(), static_cast<size_t>(kWorkers));
  EXPECT_EQ(threads.ids.count(std::this_thread::get_id()), 0u) << "the calling thread only schedules";
}

}  // namespace
}  // namespace tpu::apply
