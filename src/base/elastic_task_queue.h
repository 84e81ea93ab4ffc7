// ElasticTaskQueue: an httplib task queue whose threads come and go with the
// work. httplib's own ThreadPool starts all its threads at once and keeps
// them: the daemon's HTTP endpoints held 4 idle threads, and the embedded
// cloud emulator (--cloud sim) 64, most of an idle daemon's threads. Here a
// thread is started when a connection finds none free (up to `max_threads`)
// and ends after `idle` with nothing to do, so an idle server holds none.
//
// Header-only (it is httplib's interface). Thread-safe; shutdown() drains the
// queue and joins every thread, and must not be called from one of them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include <httplib.h>

namespace tpu {

class ElasticTaskQueue : public httplib::TaskQueue {
 public:
  explicit ElasticTaskQueue(size_t max_threads, std::chrono::milliseconds idle = std::chrono::seconds(2))
      : max_threads_(max_threads == 0 ? 1 : max_threads), idle_(idle) {}
  ~ElasticTaskQueue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(fn));
    ReapLocked();
    if (jobs_.size() > waiting_ && workers_.size() < max_threads_) {
      workers_.emplace_back();
      Worker& w = workers_.back();
      w.thread = std::thread([this, &w] { Run(w); });
    } else {
      cv_.notify_one();
    }
  }

  void shutdown() override {
    std::list<Worker> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
      all.splice(all.end(), workers_);
    }
    cv_.notify_all();
    for (auto& w : all)
      if (w.thread.joinable()) w.thread.join();
  }

  // Threads alive now (tests and the soak's accounting).
  size_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    ReapLocked();
    return workers_.size();
  }

 private:
  struct Worker {
    std::thread thread;
    bool done = false;
  };

  void Run(Worker& self) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++waiting_;
      bool woke = cv_.wait_for(lock, idle_, [this] { return shutdown_ || !jobs_.empty(); });
      --waiting_;
      if (!jobs_.empty()) {
        auto fn = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        fn();
        lock.lock();
        continue;
      }
      if (shutdown_ || !woke) {
        self.done = true;  // joined by the next enqueue, or by shutdown
        return;
      }
    }
  }

  // Joins threads that ended for want of work. REQUIRES: mu_ held. A done
  // worker only has to return from Run, which holds no lock by then.
  void ReapLocked() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  const size_t max_threads_;
  const std::chrono::milliseconds idle_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::list<Worker> workers_;
  size_t waiting_ = 0;
  bool shutdown_ = false;
};

}  // namespace tpu
