// The progress display's wiring (see progress_view.h).
#include "cli/progress_view.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "base/env.h"
#include "cli/terminal.h"

namespace tpu::cli {
namespace {

// How often the frame is redrawn: elapsed times tick, and 5 frames a second
// costs a snapshot of the scheduler each (microseconds at thousands of tasks).
constexpr auto kRedrawEvery = std::chrono::milliseconds(200);

// Log lines printed above the frame, so a warning never lands inside it.
class ProgressSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ProgressSink(apply::Progress* progress) : progress_(progress) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string line(formatted.data(), formatted.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    progress_->PrintAbove(line);
  }
  void flush_() override {}

 private:
  apply::Progress* progress_;
};

}  // namespace

ProgressView::ProgressView(std::FILE* out, int fd) : fd_(fd), live_(isatty(fd)) {
  apply::ProgressOptions o;
  o.live = live_;
  o.color = live_;
  o.reflows = live_ && TerminalReflows();
  if (auto size = TerminalSizeOf(fd)) o.size = *size;
  progress_ = std::make_unique<apply::Progress>(out, o, Env::Default().Now());
}

apply::Scheduler::Observer ProgressView::Observer() {
  apply::Progress* p = progress_.get();
  return [p](const apply::TaskResult& r) { p->OnChange(r); };
}

apply::ApplyReport ProgressView::Run(apply::Executor& executor, const plan::Plan& plan,
                                     SignalThread& signals) {
  if (!live_) return executor.Run(plan);
  std::mutex mu;
  std::condition_variable wake;
  bool finished = false;
  bool resized = false;
  signals.OnResize([&] {
    std::lock_guard<std::mutex> l(mu);
    resized = true;
    wake.notify_all();
  });
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("apply", std::make_shared<ProgressSink>(progress_.get()));
  logger->set_level(previous->level());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::set_default_logger(logger);
  std::thread redraw([&] {
    std::unique_lock<std::mutex> l(mu);
    while (!finished) {
      l.unlock();
      // The size is read before every frame, not only on SIGWINCH: a frame
      // drawn between a resize and the signal's handling would otherwise use
      // the old width, and its lines would wrap.
      std::vector<apply::TaskResult> tasks = executor.Snapshot();
      if (auto size = TerminalSizeOf(fd_)) progress_->Resize(*size);
      progress_->Redraw(tasks, Env::Default().Now());
      l.lock();
      wake.wait_for(l, kRedrawEvery, [&] { return finished || resized; });
      resized = false;
    }
  });
  apply::ApplyReport report = executor.Run(plan);
  {
    std::lock_guard<std::mutex> l(mu);
    finished = true;
  }
  wake.notify_all();
  redraw.join();
  signals.OnResize(nullptr);
  progress_->Finish(report.tasks, Env::Default().Now());
  spdlog::set_default_logger(previous);
  return report;
}

}  // namespace tpu::cli
