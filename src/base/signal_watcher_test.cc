// SignalWatcher: a blocked signal sent to the process reaches the callback on
// the watcher's thread, and a replaced callback is never called again.
#include "base/signal_watcher.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace tpu {
namespace {

// Polls `value` for up to 10 s: signal delivery is asynchronous.
bool Eventually(const std::atomic<int>& value, int want) {
  for (int i = 0; i < 1000 && value.load() != want; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return value.load() == want;
}

TEST(SignalWatcherTest, DeliversBlockedSignalsToTheCallback) {
  ASSERT_TRUE(BlockSignals({SIGUSR1, SIGUSR2}).ok());
  std::atomic<int> first{0}, second{0};
  auto watcher = SignalWatcher::Start({SIGUSR1, SIGUSR2}, [&](int signo) { first = signo; });
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  kill(getpid(), SIGUSR1);
  EXPECT_TRUE(Eventually(first, SIGUSR1));

  (*watcher)->SetCallback([&](int signo) { second = signo; });
  kill(getpid(), SIGUSR2);
  EXPECT_TRUE(Eventually(second, SIGUSR2));
  EXPECT_EQ(first.load(), SIGUSR1);  // the old callback did not see it
}

TEST(SignalWatcherTest, WaitForSignalReturnsTheOneThatCame) {
  ASSERT_TRUE(BlockSignals({SIGUSR1}).ok());
  kill(getpid(), SIGUSR1);  // pending until taken
  auto sig = WaitForSignal({SIGUSR1});
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(*sig, SIGUSR1);
}

}  // namespace
}  // namespace tpu
