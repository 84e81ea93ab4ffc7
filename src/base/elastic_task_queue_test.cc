// ElasticTaskQueue (src/base/elastic_task_queue.h): threads are started as
// work needs them, never more than the cap, and end when idle, so an idle
// server holds none.
#include "base/elastic_task_queue.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

#include "daemon/daemon_process.h"

namespace tpu {
namespace {

using daemon::testing::WaitUntil;

TEST(ElasticTaskQueueTest, ThreadsFollowTheWorkUpToTheCapAndEndWhenIdle) {
  ElasticTaskQueue q(3, std::chrono::milliseconds(50));
  EXPECT_EQ(q.threads(), 0u);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> running{0}, peak{0}, done{0};
  for (int i = 0; i < 8; ++i) {
    q.enqueue([&] {
      int now = ++running;
      for (int p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
      }
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
      --running;
      ++done;
    });
  }
  ASSERT_TRUE(WaitUntil([&] { return running == 3; }));
  EXPECT_EQ(q.threads(), 3u);  // the cap, with 5 jobs waiting
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(WaitUntil([&] { return done == 8; }));
  EXPECT_EQ(peak, 3);
  // No work for longer than the idle time: every thread ends.
  ASSERT_TRUE(WaitUntil([&] { return q.threads() == 0; }, std::chrono::seconds(5)));
  // And comes back for new work.
  std::atomic<bool> ran{false};
  q.enqueue([&] { ran = true; });
  ASSERT_TRUE(WaitUntil([&] { return ran.load(); }));
  q.shutdown();
  EXPECT_EQ(q.threads(), 0u);
}

}  // namespace
}  // namespace tpu
